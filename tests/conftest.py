"""What the tests share: the sandbox's runner on the path, the Pyodide tier's skips, and
the scripted provider server."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# shell/pyexec.py (python3 in the sandbox) is no package's module: the sandbox loads its
# source, and the tests import it from shell/.
sys.path.append(str(ROOT / "shell"))

if sys.platform == "emscripten":
    # The in-Pyodide tier imports harness from the browser wheel, which holds no tooling/
    # (build, bench, serve, the CLI, the schema writer, the scripted provider server):
    # the modules that test the tooling or need its servers run on CPython only.
    collect_ignore = [
        "test_anthropic_messages.py", "test_build.py", "test_build_packages.py",
        "test_bundle_layout.py", "test_cli.py",
        "test_cli_port.py", "test_demo_cli.py", "test_openai_chat.py", "test_provider_faults.py",
        "test_provider_server.py", "test_schema.py", "test_serve.py", "test_worker_csp.py",
    ]


@pytest.fixture(scope="module")
def shared_server():
    """One scripted provider server (both wire formats, real HTTP on loopback) per module."""
    from tooling.provider_server import ProviderServer  # sockets: not in Pyodide

    with ProviderServer() as s:
        yield s


@pytest.fixture
def server(shared_server):
    """The shared server with no queued replies and no recorded requests."""
    shared_server.reset()
    return shared_server
