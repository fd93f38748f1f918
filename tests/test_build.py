"""The bundle build fails loudly on a missing or mismatched wheel (no network needed)."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tooling.build.wheels import WHEELS, BuildError, fetch_wheels


def test_missing_wheel_names_the_file_and_fix(tmp_path):
    with pytest.raises(BuildError) as info:
        fetch_wheels(tmp_path, offline=True)
    assert WHEELS[0].file_name in str(info.value)
    assert "sha256" in str(info.value)


def test_mismatched_wheel_fails(tmp_path):
    for wheel in WHEELS:
        (tmp_path / wheel.file_name).write_bytes(b"not the pinned wheel")
    with pytest.raises(BuildError) as info:
        fetch_wheels(tmp_path, offline=True)
    assert "expected" in str(info.value) and "delete it" in str(info.value)


def test_pins_are_consistent():
    names = {w.name for w in WHEELS}
    for wheel in WHEELS:
        assert set(wheel.depends) <= names, wheel.name
        assert len(wheel.sha256) == 64
        assert wheel.file_name.startswith(wheel.name.replace("-", "_") + "-" + wheel.version)


# --- bytecode: the standard library and the wheels ship as .pyc (pycompile.mjs) -----------

ROOT = Path(__file__).resolve().parents[1]
PYODIDE = ROOT / "node_modules" / "pyodide"


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, body in files.items():
            z.writestr(name, body)
    return path


@pytest.mark.skipif(sys.platform == "emscripten" or shutil.which("node") is None
                    or not (PYODIDE / "pyodide.mjs").exists(),
                    reason="needs Node and node_modules/pyodide (the build's own tools)")
def test_pycompile_makes_sourceless_bytecode_named_by_the_source_path(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    stdlib = _zip(src / "python_stdlib.zip", {
        "json/__init__.py": b"x = 1\n", "broken.py": b"def (:\n", "data/table.txt": b"keep",
    })
    wheel = _zip(src / "demo-1.0-py3-none-any.whl", {
        "demo/mod.py": b"y = 2\n", "demo-1.0.dist-info/METADATA": b"Name: demo\n",
    })
    cmd = ["node", str(ROOT / "tooling" / "build" / "pycompile.mjs"), str(PYODIDE), str(out),
           str(stdlib), str(wheel)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)

    with zipfile.ZipFile(out / "python_stdlib.zip") as z:
        names = set(z.namelist())
        assert names == {"json/__init__.pyc", "broken.py", "data/table.txt"}
        pyc = z.read("json/__init__.pyc")
        assert z.read("broken.py") == b"def (:\n"  # does not compile: stays source
        assert z.read("data/table.txt") == b"keep"
    # Sourceless timestamp pyc (flags 0, mtime 0, size 0); the code object is named by
    # where zipimport would have found the source, so tracebacks keep file and line.
    assert pyc[4:16] == bytes(12)
    assert b"/lib/python314.zip/json/__init__.py" in pyc
    with zipfile.ZipFile(out / wheel.name) as z:
        assert set(z.namelist()) == {"demo/mod.pyc", "demo-1.0.dist-info/METADATA"}
        assert b"/lib/python3.14/site-packages/demo/mod.py" in z.read("demo/mod.pyc")
