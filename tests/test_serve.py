"""The static server used by `make demo` and the e2e tier, over real HTTP on loopback."""

import http.client
import sys

import pytest

from tooling.serve import StaticServer

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


def request(srv, path, headers=None):
    host, port = srv.httpd.server_address[:2]
    conn = http.client.HTTPConnection(str(host), port)
    conn.request("GET", path, headers=headers or {})
    resp = conn.getresponse()
    return resp, resp.read()


def test_precompressed_siblings_when_accepted(server, tmp_path):
    bundle = tmp_path / "bundle"
    (bundle / "a.wasm.br").write_bytes(b"brotli bytes")
    (bundle / "a.wasm.gz").write_bytes(b"gzip bytes")
    (bundle / "only.mjs.gz").write_bytes(b"gz only")
    resp, body = request(server, "/b/a.wasm", {"Accept-Encoding": "gzip, deflate, br"})
    assert body == b"brotli bytes" and resp.getheader("Content-Encoding") == "br"
    assert resp.getheader("Content-Type") == "application/wasm"
    assert resp.getheader("Vary") == "Accept-Encoding"
    resp, body = request(server, "/b/a.wasm", {"Accept-Encoding": "gzip, br;q=0"})
    assert body == b"gzip bytes" and resp.getheader("Content-Encoding") == "gzip"
    resp, body = request(server, "/b/a.wasm")
    assert body == b"\0asm" and resp.getheader("Content-Encoding") is None
    resp, body = request(server, "/b/only.mjs", {"Accept-Encoding": "gzip"})
    assert body == b"gz only" and resp.getheader("Content-Type") == "text/javascript"
    assert request(server, "/b/only.mjs")[0].status == 404
    # server.responses: each response as sent, for tests to check what went on the wire
    sent = [(path, status, h.get("content-encoding")) for path, status, h in server.responses]
    assert sent[-5:] == [("/b/a.wasm", 200, "br"), ("/b/a.wasm", 200, "gzip"),
                         ("/b/a.wasm", 200, None), ("/b/only.mjs", 200, "gzip"),
                         ("/b/only.mjs", 404, None)]


def test_isolate_sends_the_cross_origin_isolation_headers(server, tmp_path):
    assert request(server, "/")[0].getheader("Cross-Origin-Opener-Policy") is None
    (tmp_path / "index.html").write_text("<p>x</p>")
    srv = StaticServer({"/": tmp_path}, isolate=True).start()
    try:
        resp, _ = request(srv, "/")
        assert resp.getheader("Cross-Origin-Opener-Policy") == "same-origin"
        assert resp.getheader("Cross-Origin-Embedder-Policy") == "require-corp"
    finally:
        srv.stop()


def test_a_strict_site_cors_headers_of_a_path_and_isolation_but_on_some(tmp_path):
    # e2e/test_strict_pages.py's servers: a CDN with CORS, a page's own CSP, an isolated
    # site whose worker.mjs lacks COEP. All off by default (the test above).
    (tmp_path / "page.html").write_text("<p>x</p>")
    (tmp_path / "worker.mjs").write_text("export {}")
    csp = {"Content-Security-Policy": "require-trusted-types-for 'script'"}
    srv = StaticServer({"/": tmp_path}, isolate=True, cors=True, headers={"/page.html": csp},
                       isolate_except=("/worker.mjs",)).start()
    try:
        page, _ = request(srv, "/page.html")
        assert page.getheader("Content-Security-Policy") == csp["Content-Security-Policy"]
        assert page.getheader("Access-Control-Allow-Origin") == "*"
        assert page.getheader("Cross-Origin-Embedder-Policy") == "require-corp"
        assert page.getheader("Cross-Origin-Resource-Policy") == "cross-origin"  # CORS: any origin
        worker, _ = request(srv, "/worker.mjs")
        assert worker.getheader("Access-Control-Allow-Origin") == "*"
        assert worker.getheader("Cross-Origin-Embedder-Policy") is None
        assert worker.getheader("Cross-Origin-Opener-Policy") is None
        assert worker.getheader("Content-Security-Policy") is not None  # its own, WORKER_CSP
    finally:
        srv.stop()
    srv = StaticServer({"/": tmp_path}).start()
    try:
        plain, _ = request(srv, "/page.html")
        assert plain.getheader("Access-Control-Allow-Origin") is None
        assert plain.getheader("Content-Security-Policy") is None
    finally:
        srv.stop()


def test_precompressed_siblings_revalidate(server, tmp_path):
    # A returning visitor's conditional request gets 304, as plain files do: its cached
    # body (and the code the browser compiled from it) stays in use.
    (tmp_path / "bundle" / "a.wasm.gz").write_bytes(b"gzip bytes")
    resp, _ = request(server, "/b/a.wasm", {"Accept-Encoding": "gzip"})
    stamp = resp.getheader("Last-Modified")
    assert stamp is not None
    resp, body = request(server, "/b/a.wasm", {"Accept-Encoding": "gzip",
                                                 "If-Modified-Since": stamp})
    assert resp.status == 304 and body == b""
    epoch = "Thu, 01 Jan 1970 00:00:00 GMT"
    resp, body = request(server, "/b/a.wasm", {"Accept-Encoding": "gzip",
                                                 "If-Modified-Since": epoch})
    assert resp.status == 200 and body == b"gzip bytes"
