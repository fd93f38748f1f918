"""The harness worker's own CSP (docs/security.md): `pyharness serve` sends it with
worker.mjs, the Vite plugin's dev server sends the same policy, and the docs show it."""

import http.client
import re
import sys
from pathlib import Path

import pytest

from tooling.serve import WORKER_CSP, StaticServer

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")
def test_serve_sends_the_worker_csp_with_worker_mjs_only(tmp_path):
    (tmp_path / "worker.mjs").write_text("export {}")
    (tmp_path / "pyharness.mjs").write_text("export {}")
    srv = StaticServer({"/p/": tmp_path}).start()
    try:
        host, port = srv.httpd.server_address[:2]
        headers = {}
        for name in ("worker.mjs", "pyharness.mjs"):
            conn = http.client.HTTPConnection(str(host), port)
            conn.request("GET", f"/p/{name}?v=1")
            response = conn.getresponse()
            response.read()
            headers[name] = response.getheader("Content-Security-Policy")
    finally:
        srv.stop()
    assert headers == {"worker.mjs": WORKER_CSP, "pyharness.mjs": None}


def test_one_policy_in_the_server_the_vite_plugin_and_the_docs():
    if not (ROOT / "embed" / "node" / "vite.mjs").exists():
        pytest.skip("needs the source checkout (embed/, docs/)")
    vite = (ROOT / "embed" / "node" / "vite.mjs").read_text()
    assert re.search(r'const WORKER_CSP = "([^"]+)"', vite).group(1) == WORKER_CSP
    security = (ROOT / "docs" / "security.md").read_text()
    assert f"Content-Security-Policy: {WORKER_CSP}" in security
    assert security.count(WORKER_CSP) >= 4  # the header, nginx, Caddy, _headers
