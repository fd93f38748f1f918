"""A small static file server for the demo and the browser tests (CPython only).

Serves one or more directories at URL prefixes on loopback, with the MIME types a
module worker and Pyodide need, and records every request (the e2e tier checks that
no request left the served origin).
"""

from __future__ import annotations

import mimetypes
import posixpath
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

TYPES = {".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
         ".ts": "text/plain"}


class StaticServer:
    """``mounts`` maps URL prefixes ("/", "/pyharness/") to directories."""

    def __init__(self, mounts: dict[str, Path], host: str = "127.0.0.1", port: int = 0) -> None:
        self.mounts: list[tuple[str, Path]] = []
        for prefix, directory in mounts.items():
            self.add_mount(prefix, directory)
        self.requests: list[str] = []
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

        def end_headers(self) -> None:
            self.send_header("Cache-Control", "no-cache")
            super().end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            server.requests.append(self.path)

    return Handler
