"""python3 in the shell: the runner the sandbox loads, run here on CPython with the
shell's mounts mapped onto temporary directories."""

import ast
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import pyexec
from pyexec import run_python


@pytest.fixture
def jail(tmp_path):
    mounts = {"/work": str(tmp_path / "work"), "/tmp": str(tmp_path / "tmp")}
    for directory in mounts.values():
        os.makedirs(directory)
    return SimpleNamespace(root=mounts["/work"], mounts=mounts)


def run(jail, args, stdin="", cwd=None, timeout=5.0):
    return run_python(args, stdin, cwd or "/work", timeout, jail.mounts)


def test_json_entry_of_the_sandbox(jail, monkeypatch):
    monkeypatch.setattr(pyexec, "SANDBOX_MOUNTS", jail.mounts)
    reply = pyexec.run_python_json(json.dumps(
        {"args": ["-c", "import os; print(os.getcwd())"], "cwd": "/", "stdin": "",
         "timeoutMs": 5000}))
    assert json.loads(reply) == {"stdout": jail.root + "\n", "stderr": "", "exitCode": 0}


# What every Pyodide has (its own modules) and what the sandbox loads from the bundle.
SANDBOX_MODULES = {"pyodide", "pyodide_js", "micropip"}


@pytest.mark.parametrize("name", ["pyexec.py", "pyharness_pip.py"])
def test_the_sandbox_modules_import_only_the_standard_library(name):
    # The sandbox loads these files' source into a Pyodide without the harness.
    tree = ast.parse((Path(pyexec.__file__).parent / name).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    assert not any(isinstance(node, ast.ImportFrom) and node.level for node in ast.walk(tree))
    assert imported - {"__future__"} <= sys.stdlib_module_names | SANDBOX_MODULES, imported


def test_dash_c_with_args_and_stdin(jail):
    r = run(jail, ["-c", "import sys; print(sys.argv, sys.stdin.read().upper())", "a", "b"],
            stdin="hi")
    assert r.stdout == "['-c', 'a', 'b'] HI\n" and r.exit_code == 0


def test_script_file_relative_to_cwd_writes_files(jail):
    os.makedirs(os.path.join(jail.root, "src"))
    with open(os.path.join(jail.root, "src", "s.py"), "w") as f:
        f.write("import sys, os\nopen('out.txt', 'w').write(os.getcwd())\nprint(sys.argv)\n")
    r = run(jail, ["s.py", "x"], cwd="/work/src")
    assert r.exit_code == 0 and r.stdout == "['s.py', 'x']\n"
    with open(os.path.join(jail.root, "src", "out.txt")) as f:
        assert f.read() == os.path.join(jail.root, "src")


def test_exit_codes(jail):
    assert run(jail, ["-c", "import sys; sys.exit(3)"]).exit_code == 3
    assert run(jail, ["-c", "import sys; sys.exit()"]).exit_code == 0
    r = run(jail, ["-c", "import sys; sys.exit('fatal')"])
    assert r.exit_code == 1 and r.stderr == "fatal\n"
    r = run(jail, ["-c", "raise ValueError('boom')"])
    assert r.exit_code == 1 and r.stderr.startswith("Traceback") and "ValueError: boom" in r.stderr
    assert "pyexec" not in r.stderr


def test_fresh_namespace_per_invocation(jail):
    assert run(jail, ["-c", "leak = 1"]).exit_code == 0
    r = run(jail, ["-c", "print(leak)"])
    assert r.exit_code == 1 and "NameError" in r.stderr


def test_code_from_stdin_module_and_version(jail):
    assert run(jail, [], stdin="print(6 * 7)").stdout == "42\n"
    assert run(jail, ["-"], stdin="print('dash')").stdout == "dash\n"
    r = run(jail, ["-m", "json.tool"], stdin='{"a":1}')
    assert r.exit_code == 0 and '"a": 1' in r.stdout
    assert run(jail, ["--version"]).stdout.startswith("Python 3.")


def test_usage_errors(jail):
    r = run(jail, ["missing.py"])
    assert r.exit_code == 2 and "can't open file 'missing.py'" in r.stderr
    assert run(jail, ["-c"]).exit_code == 2
    assert run(jail, ["-X", "dev"]).exit_code == 2
    assert run(jail, ["/etc/passwd"]).exit_code == 2  # scripts come from /work or /tmp
    assert run(jail, ["../../etc/passwd"]).exit_code == 2


def test_deadline_stops_a_pure_python_loop(jail):
    r = run(jail, ["-c", "i = 0\nwhile True:\n    i += 1"], timeout=0.2)
    assert r.exit_code == 124 and "timed out" in r.stderr


@pytest.mark.skipif(sys.version_info < (3, 12),
                    reason="CPython 3.11 emits no line event for a one-line loop; Pyodide "
                           "(3.14, the runtime that matters) does, and runs this test")
def test_deadline_stops_a_one_line_loop(jail):
    r = run(jail, ["-c", "while True: pass"], timeout=0.2)
    assert r.exit_code == 124 and "timed out" in r.stderr


def test_io_is_restored_after_a_run(jail):
    before = (sys.stdout, sys.stderr, sys.stdin, sys.argv, os.getcwd(), sys.gettrace())
    run(jail, ["-c", "import os; os.chdir('/')"])
    assert (sys.stdout, sys.stderr, sys.stdin, sys.argv, os.getcwd(), sys.gettrace()) == before


def test_top_level_await_runs_to_its_end(jail):
    # `await micropip.install("x")` in a script, as in Pyodide's REPL.
    r = run(jail, ["-c", "import asyncio\nawait asyncio.sleep(0)\nprint('after')"])
    assert (r.stdout, r.exit_code) == ("after\n", 0)
