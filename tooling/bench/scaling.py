"""The workspace-scaling figures of ``pyharness bench`` (page side: page/scaling.mjs).

Each is the same step on a workspace of 1,000 / 10,000 small files beside an empty one,
in the same run (``Sizes.scaling``; the smoke run's are smaller, under the same keys):
a ``bash`` call of ``true`` (median over the calls), a reopened OPFS
workspace (``createHarness`` after a reload), and the sandbox's first full copy of a
~100 MB workspace. The zips are made here and served to the page at ``/zips/``.
"""

from __future__ import annotations

import secrets
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import FULL, Sizes, _metric, median

FILE_BYTES = 100  # each small file
PER_DIR = 100  # files per folder


def write_zips(directory: Path, sizes: tuple[int, ...] = FULL.scaling) -> dict[int, str | None]:
    """One zip per non-empty size in `directory`; size → its URL below /zips/ (0: None)."""
    urls: dict[int, str | None] = {0: None}
    for files in sizes[1:]:
        path = directory / f"files-{files}.zip"
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for i in range(files):
                archive.writestr(f"d{i // PER_DIR}/f{i}.txt", f"file {i}\n".ljust(FILE_BYTES, "."))
        urls[files] = f"/zips/{path.name}"
    return urls


def _turns(sizes: tuple[int, ...], reps: int) -> list[tuple[int, ...]]:
    """The sizes in turns, reversed every other round (no size always comes first)."""
    return [sizes if i % 2 == 0 else sizes[::-1] for i in range(reps)]


def measure(new_page: Callable[[], Any], zips: dict[int, str | None], reps: int,
            log: Callable[[str], None], sizes: Sizes = FULL) -> dict[str, Any]:
    """Run the scaling steps; returns report keys plus their "detail" metrics."""
    log("workspace scaling: bash calls, first copy of 100 MB")
    page = new_page()
    shell: dict[int, list[dict[str, Any]]] = {files: [] for files in sizes.scaling}
    sync: list[dict[str, Any]] = []
    for order in _turns(sizes.scaling, reps):
        for files in order:
            shell[files].append(page.call("shellOnFiles", {
                "zip": zips[files], "files": files, **sizes.of("shellOnFiles")}))
        sync.append(page.call("firstSync", sizes.of("firstSync")))
    page.close()

    log("workspace scaling: reopening stored OPFS workspaces")
    token = secrets.token_hex(4)
    names = {files: f"bench-reopen-{token}-{files}" for files in sizes.scaling}
    reopened: dict[int, list[float]] = {files: [] for files in sizes.scaling}
    page = new_page()
    try:
        for files in sizes.scaling:
            page.call("makeWorkspace", {"name": names[files], "zip": zips[files], "files": files})
        for order in _turns(sizes.scaling, reps):
            for files in order:
                page.revisit()  # same context: OPFS and the HTTP cache stay
                out = page.call("reopen", {"name": names[files]})
                if out["restored"] < files:
                    raise RuntimeError(f"reopened {out['restored']} of {files} files")
                reopened[files].append(float(out["ms"]))
    finally:
        page.revisit()
        page.call("deleteWorkspaces", {"names": list(names.values())})
        page.close()
    return scaling_report(shell, sync, reopened)


def scaling_report(shell: dict[int, list[dict[str, Any]]], sync: list[dict[str, Any]],
                   reopened: dict[int, list[float]]) -> dict[str, Any]:
    """The figures from the page's rows: per size, shellOnFiles results ({firstMs,
    samples}) and reopen times; firstSync results ({ms, bytes}). The sizes are the
    keys of `shell` and `reopened`, smallest first: empty, 1,000 and 10,000 files in the
    full run (the key names say those)."""
    calls = {files: [float(x) for run in runs for x in run["samples"]]
             for files, runs in shell.items()}
    empty, mid, large = sorted(shell)
    empty_first = [float(run["firstMs"]) for run in shell[empty]]
    detail = {
        "shell_call_ms_1000": _metric(calls[mid], calls[empty]),
        "shell_call_ms_10000": _metric(calls[large], calls[empty]),
        "reopen_boot_ms_1000": _metric(reopened[mid], reopened[empty]),
        "reopen_boot_ms_10000": _metric(reopened[large], reopened[empty]),
        "first_sync_100mb_ms": _metric([float(s["ms"]) for s in sync], empty_first),
    }
    report: dict[str, Any] = {
        "shell_call_ms_empty": median(calls[empty]),
        "shell_call_ms_1000": detail["shell_call_ms_1000"]["median"],
        "shell_call_ms_10000": detail["shell_call_ms_10000"]["median"],
        "shell_scale_ratio": detail["shell_call_ms_10000"]["ratio"],
        "reopen_boot_ms_empty": median(reopened[empty]),
        "reopen_boot_ms_1000": detail["reopen_boot_ms_1000"]["median"],
        "reopen_boot_ms_10000": detail["reopen_boot_ms_10000"]["median"],
        "reopen_scale_ratio": detail["reopen_boot_ms_10000"]["ratio"],
        "first_sync_100mb_ms": detail["first_sync_100mb_ms"]["median"],
        "first_sync_empty_ms": detail["first_sync_100mb_ms"]["baseline"],
        "first_sync_100mb_bytes": median([float(s["bytes"]) for s in sync]),
    }
    report["detail"] = detail
    return report
