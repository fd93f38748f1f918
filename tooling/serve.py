"""A small static file server for the demo and the browser tests (CPython only).

Serves one or more directories at URL prefixes on loopback, with the MIME types a
module worker and Pyodide need, and records every request (the e2e tier checks that
no request left the served origin). A pre-compressed sibling (``x.wasm.br``,
``x.wasm.gz``) is sent instead of ``x.wasm`` when the client accepts its encoding, and
``isolate`` adds the COOP/COEP headers that make a page cross-origin isolated
(SharedArrayBuffer). For the rows of a strict site (e2e/test_strict_pages.py): ``cors``
serves the files to any origin (a CDN), ``headers`` adds headers to given paths (a page's
Content-Security-Policy), and ``isolate_except`` leaves the isolation headers off some
paths (a bundle whose worker.mjs lacks COEP).
"""

from __future__ import annotations

import email.utils
import mimetypes
import posixpath
import threading
from collections.abc import Mapping, Sequence
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote, urlsplit

TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
         ".ts": "text/plain"}
# Pre-compressed siblings, in order of preference: (Content-Encoding, file suffix).
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))
# The harness worker's own CSP (docs/security.md): a worker takes its CSP from its
# script's response, and this one needs nothing but its own origin.
WORKER_CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; "
              "base-uri 'none'")
ISOLATION_HEADERS = {"Cross-Origin-Opener-Policy": "same-origin",
                     "Cross-Origin-Embedder-Policy": "require-corp",
                     "Cross-Origin-Resource-Policy": "same-origin"}


class StaticServer:
    """``mounts`` maps URL prefixes ("/", "/pyharness/") to directories; ``isolate`` sends
    the cross-origin isolation headers with every response but those whose URL path ends
    with one of ``isolate_except``; ``cors`` sends ``Access-Control-Allow-Origin: *`` (and
    ``Cross-Origin-Resource-Policy: cross-origin`` when isolating); ``headers`` maps a URL
    path ("/strict.html") to more headers for its responses. All off by default."""

    def __init__(self, mounts: dict[str, Path], host: str = "127.0.0.1", port: int = 0,
                 isolate: bool = False, *, cors: bool = False,
                 headers: Mapping[str, Mapping[str, str]] | None = None,
                 isolate_except: Sequence[str] = ()) -> None:
        self.isolate = isolate
        self.cors = cors
        self.headers = {path: dict(values) for path, values in (headers or {}).items()}
        self.isolate_except = tuple(isolate_except)
        self.mounts: list[tuple[str, Path]] = []
        for prefix, directory in mounts.items():
            self.add_mount(prefix, directory)
        self.requests: list[str] = []
        self.responses: list[tuple[str, int, dict[str, str]]] = []
        """Each response as sent: the path, the status and the headers (lower-case names)."""
        handler = _handler_for(self)
        self.httpd = ThreadingHTTPServer((host, port), handler)
        self.thread: threading.Thread | None = None

    def add_mount(self, prefix: str, directory: Path) -> None:
        prefix = prefix if prefix.endswith("/") else prefix + "/"
        self.mounts.append((prefix, Path(directory).resolve()))
        self.mounts.sort(key=lambda m: -len(m[0]))  # the longest prefix wins

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> StaticServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def translate(self, url_path: str) -> Path | None:
        path = posixpath.normpath(unquote(urlsplit(url_path).path))
        if url_path.endswith("/") and not path.endswith("/"):
            path += "/"
        for prefix, directory in self.mounts:
            if path == prefix.rstrip("/") or path.startswith(prefix):
                rel = path[len(prefix):].lstrip("/")
                target = (directory / rel).resolve()
                if target == directory or directory in target.parents:
                    return target / "index.html" if target.is_dir() else target
                return None
        return None


def _handler_for(server: StaticServer) -> type[SimpleHTTPRequestHandler]:
    class Handler(SimpleHTTPRequestHandler):
        extensions_map = {**mimetypes.types_map, **TYPES}  # noqa: RUF012

        def translate_path(self, path: str) -> str:
            target = server.translate(path)
            return str(target) if target is not None else "/nonexistent/"

        def send_head(self) -> Any:
            found = self._precompressed()
            if found is None:
                return super().send_head()
            sibling, encoding, original = found
            modified = int(sibling.stat().st_mtime)
            if _not_modified_since(self.headers.get("If-Modified-Since"), modified):
                # As the plain files get from SimpleHTTPRequestHandler: a returning visitor
                # revalidates (no-cache) and keeps its cached body and compiled code.
                self.send_response(304)
                self.send_header("Vary", "Accept-Encoding")
                self.end_headers()
                return None
            file: BinaryIO = sibling.open("rb")
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(original)))
            self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(sibling.stat().st_size))
            self.send_header("Last-Modified", self.date_time_string(modified))
            self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return file

        def _precompressed(self) -> tuple[Path, str, Path] | None:
            target = server.translate(self.path)
            if target is None:
                return None
            accepted = _accepted(self.headers.get("Accept-Encoding", ""))
            for encoding, suffix in ENCODINGS:
                sibling = target.with_name(target.name + suffix)
                if encoding in accepted and sibling.is_file():
                    return sibling, encoding, target
            return None

        def end_headers(self) -> None:
            self.send_header("Cache-Control", "no-cache")
            path = urlsplit(self.path).path
            if path.endswith("/worker.mjs"):
                self.send_header("Content-Security-Policy", WORKER_CSP)
            for name, value in server.headers.get(path, {}).items():
                self.send_header(name, value)
            if server.cors:
                self.send_header("Access-Control-Allow-Origin", "*")
            if server.isolate and not path.endswith(server.isolate_except):
                for name, value in ISOLATION_HEADERS.items():
                    if name == "Cross-Origin-Resource-Policy" and server.cors:
                        value = "cross-origin"
                    self.send_header(name, value)
            super().end_headers()
            server.responses.append((self.path, self._status, self._sent))

        def send_header(self, keyword: str, value: str) -> None:
            self._sent.setdefault(keyword.lower(), value)
            super().send_header(keyword, value)

        def send_response(self, code: int, message: str | None = None) -> None:
            self._sent: dict[str, str] = {}
            self._status = code
            super().send_response(code, message)

        def log_message(self, format: str, *args: Any) -> None:
            server.requests.append(self.path)


    return Handler


def _not_modified_since(header: str | None, modified: int) -> bool:
    if not header:
        return False
    try:
        since = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError, OverflowError):
        return False
    return since.tzinfo is not None and modified <= since.timestamp()


def _accepted(header: str) -> set[str]:
    """The codings an Accept-Encoding header accepts ("gzip, br;q=0" → {"gzip"})."""
    out = set()
    for item in header.split(","):
        name, _, params = item.strip().partition(";")
        if name and params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000"):
            out.add(name.strip().lower())
    return out
