"""The static server used by `make demo` and the e2e tier, over real HTTP on loopback."""

import http.client
import sys

import pytest

from harness.serve import StaticServer

# A server needs sockets and threads, which Pyodide does not have; the in-Pyodide tier
# runs everything else. (The server is a CPython tool: `make demo`, the e2e tier.)
pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")


@pytest.fixture
def server(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>home</p>")
    (tmp_path / "bundle").mkdir()
    (tmp_path / "bundle" / "a.mjs").write_text("export {}")
    (tmp_path / "bundle" / "a.wasm").write_bytes(b"\0asm")
    (tmp_path / "secret.txt").write_text("secret")
    srv = StaticServer({"/": tmp_path / "site", "/b/": tmp_path / "bundle"}).start()
    yield srv
    srv.stop()


def get(srv, path):
    host, port = srv.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, resp.getheader("Content-Type"), resp.read()


def test_mounts_and_mime_types(server):
    assert get(server, "/")[2] == b"<p>home</p>"
    assert get(server, "/b/a.mjs")[1] == "text/javascript"
    assert get(server, "/b/a.wasm")[1] == "application/wasm"
    assert server.requests == ["/", "/b/a.mjs", "/b/a.wasm"]


@pytest.mark.parametrize("path", ["/../secret.txt", "/b/../../secret.txt", "/b/%2e%2e/secret.txt",
                                  "/nope"])
def test_nothing_outside_the_mounts(server, path):
    assert get(server, path)[0] == 404
