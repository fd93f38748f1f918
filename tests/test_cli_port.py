"""`pyharness serve` / `pyharness demo` on a port that is taken: one line naming the
option to change, a non-zero exit, no traceback."""

import socket
import subprocess
import sys

import pytest

from tooling.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")


@pytest.fixture
def taken_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_serve_on_a_taken_port(taken_port, tmp_path, capsys):
    assert main(["serve", str(tmp_path), "--port", str(taken_port)]) == 1
    err = capsys.readouterr().err
    assert err == (f"pyharness serve: port {taken_port} on 127.0.0.1 is already in use; pick "
                   "another with --port N (make demo: PORT=N)\n")


def test_demo_on_a_taken_port(taken_port, tmp_path, capsys, monkeypatch):
    (tmp_path / "widget.mjs").write_text("export {}")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PYHARNESS_MODEL_API",
                "PYHARNESS_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    code = main(["demo", "--port", str(taken_port), "--bundle", str(tmp_path), "--no-build"])
    assert code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"pyharness demo: port {taken_port} on 127.0.0.1 is already in use; pick "
                   "another with --port N (make demo: PORT=N)"]


def test_the_command_itself_exits_non_zero_without_a_traceback(taken_port, tmp_path):
    done = subprocess.run([sys.executable, "-m", "tooling.cli", "serve", str(tmp_path),
                           "--port", str(taken_port)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "--port" in done.stderr
