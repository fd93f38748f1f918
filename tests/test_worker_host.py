"""The seam between the worker's JavaScript and Python has two halves that must name the
same members: the Protocol ``WorkerHost`` (harness/runtime/worker_host.py, which mypy
holds the Python side to) and the JSDoc ``@typedef WorkerHost`` in embed/worker/ (which
``tsc --checkJs`` holds the object worker.mjs builds to). A member added to one and not
the other fails here."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.runtime.sandbox_shell import KILLED_TIMEOUT, SANDBOX_CONFLICT
from harness.runtime.worker_host import WorkerHost

WORKER = Path(__file__).resolve().parents[1] / "embed" / "worker"

pytestmark = pytest.mark.skipif(not WORKER.is_dir(), reason="needs the source tree")


def typedef_members() -> set[str]:
    """The ``@property`` names of the one ``@typedef {object} WorkerHost`` in embed/worker/."""
    found = []
    for path in sorted(WORKER.glob("*.mjs")):
        for block in re.findall(r"/\*\*((?:(?!\*/).)*?@typedef \{object\} WorkerHost\b.*?)\*/",
                                path.read_text(encoding="utf-8"), re.S):
            found.append(set(re.findall(r"@property \{.*?\} (\w+)", block)))
    assert len(found) == 1, f"expected one @typedef WorkerHost in embed/worker/, found {len(found)}"
    return found[0]


def protocol_members() -> set[str]:
    return {name for name in vars(WorkerHost) if not name.startswith("_")}


def test_the_typedef_and_the_protocol_name_the_same_members():
    js, py = typedef_members(), protocol_members()
    assert js == py, (f"only in the JS typedef: {sorted(js - py)}; "
                      f"only in harness/runtime/worker_host.py: {sorted(py - js)}")
    assert {"http", "journal", "sandbox"} <= py


@pytest.mark.skipif(shutil.which("node") is None or sys.platform == "emscripten",
                    reason="needs node")
def test_the_kill_reason_python_tells_apart_is_the_tables():
    """Why the sandbox client tore a sandbox down is one frozen table (``KILL`` in
    embed/worker/sandbox-client.mjs): each reason's name, what the model is told, the
    page's diagnostic. Python passes the ``why`` on and names only the timeout."""
    script = ("const { KILL } = await import(process.argv[1]);"
              "console.log(JSON.stringify(KILL));")
    out = subprocess.run(["node", "--input-type=module", "-e", script,
                          (WORKER / "sandbox-client.mjs").as_uri()],
                         capture_output=True, text=True, check=True, timeout=60)
    table = json.loads(out.stdout)
    assert table["TIMEOUT"]["name"] == KILLED_TIMEOUT
    names = [k["name"] for k in table.values()]
    assert len(set(names)) == len(names) and all(k["why"] for k in table.values())


@pytest.mark.skipif(shutil.which("node") is None or sys.platform == "emscripten",
                    reason="needs node")
def test_the_diagnostic_code_python_reports_is_the_protocols():
    """What SandboxShell reports through the client (sandbox_dropped) is a code of the
    protocol's table, one the client may report (SANDBOX_CODES)."""
    script = ("const p = await import(process.argv[1]);"
              "console.log(JSON.stringify([p.CODE.SANDBOX_CONFLICT, p.SANDBOX_CODES]));")
    out = subprocess.run(["node", "--input-type=module", "-e", script,
                          (WORKER.parent / "shared" / "protocol.mjs").as_uri()],
                         capture_output=True, text=True, check=True, timeout=60)
    code, allowed = json.loads(out.stdout)
    assert code == SANDBOX_CONFLICT and code in allowed
