"""Reopening a stored OPFS workspace of 10,000 small files (100 bytes, 100 a folder),
measured against reopening an empty one: createHarness after the page is loaded again (OPFS
and the HTTP cache kept), the two sizes taking turns, reversed every other round; the
lower quartiles compared (the boot they share moves by 40% on this shared two-core
machine: the lower quartile is the boot left alone; of three, it is the fastest). Three
rounds in `make test` (five until this stop), seven in `make fuzz`
(PYHARNESS_REOPEN_ROUNDS), where the row was measured with seven.
``pyharness bench`` reports the same figure as reopen_scale_ratio (medians). The page side
is in e2e/pages/rows/reopen.mjs.

The issue's goal is 1.2x. Measured here: 1.10-1.13 in quiet runs, 1.37 in one run of
the serial rows right after the parallel ones (the empty reopen took 1.6-1.9 s, the full
one 1.9-2.4 s). The row reports the ratio and fails past 1.5x, under the 1.61x this
work started from; holding 1.2x on every run is left open (issue 28's note)."""

import base64
import io
import json
import os
import secrets
import statistics
import zipfile
from typing import Any

import pytest

from e2e.conftest import call

FILES = 10_000
ROUNDS = int(os.environ.get("PYHARNESS_REOPEN_ROUNDS", "3"))
GOAL = 1.2  # reported against (printed)
BOUND = 1.5  # the row fails past this


def workspace_zip(files: int) -> str:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(files):
            archive.writestr(f"d{i // 100}/f{i}.txt", f"file {i}\n".ljust(100, "."))
    return base64.b64encode(out.getvalue()).decode()


def reload(app: Any) -> None:
    app.reload()
    app.wait_for_function("window.pyharness !== undefined")


@pytest.mark.serial  # compares boot times
def test_reopening_10000_files_costs_little_more_than_an_empty_workspace(app: Any) -> None:
    token = secrets.token_hex(4)
    names = {0: f"reopen-{token}-empty", FILES: f"reopen-{token}-{FILES}"}
    try:
        for files, name in names.items():
            stored = call(app, "reopen.store", name, workspace_zip(files) if files else "")
            assert stored == {"kind": "opfs", "files": files}
        times: dict[int, list[float]] = {0: [], FILES: []}
        for round_ in range(ROUNDS):
            for files in (0, FILES) if round_ % 2 == 0 else (FILES, 0):
                reload(app)
                out = call(app, "reopen.reopen", names[files])
                assert out["kind"] == "opfs" and out["restoredFiles"] == files, out
                times[files].append(out["ms"])
        empty, full = (statistics.quantiles(times[n], n=4)[0] for n in (0, FILES))
        print(json.dumps({"reopen ms empty": round(empty), f"reopen ms {FILES}": round(full),
                          "ratio": round(full / empty, 3), "goal": GOAL, "fails past": BOUND,
                          "all": {k: [round(t) for t in v] for k, v in times.items()}}))
        assert full <= BOUND * empty, times
    finally:
        reload(app)
        call(app, "reopen.remove", list(names.values()))
