"""A git server for the e2e rows: the host's own `git http-backend` (smart HTTP, Debian's
git) behind a small CGI wrapper on loopback, with Basic auth, CORS for the page's
origin, and a log of every request (method, path, the Authorization header as it
arrived), for rows to check what reached the server and what did not."""

from __future__ import annotations

import base64
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

BACKEND = "/usr/lib/git-core/git-http-backend"


@dataclass
class Logged:
    method: str
    path: str
    authorization: str | None


@dataclass
class GitServer:
    """Repositories under `root`, served at http://127.0.0.1:PORT/<name>.git; with
    `user`/`password`, every request must carry them (Basic), else 401."""

    root: Path
    user: str | None = None
    password: str | None = None
    log: list[Logged] = field(default_factory=list)

    def start(self) -> GitServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _cors(self) -> None:
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
                asked = self.headers.get("Access-Control-Request-Headers")
                if asked:
                    self.send_header("Access-Control-Allow-Headers", asked)

            def do_OPTIONS(self) -> None:
                self.send_response(204)
                self._cors()
                self.end_headers()

            def do_GET(self) -> None:
                self._backend()

            def do_POST(self) -> None:
                self._backend()

            def _backend(self) -> None:
                auth = self.headers.get("Authorization")
                server.log.append(Logged(self.command, self.path, auth))
                if server.user is not None:
                    want = "Basic " + base64.b64encode(
                        f"{server.user}:{server.password}".encode()).decode()
                    if auth != want:
                        self.send_response(401)
                        self.send_header("WWW-Authenticate", 'Basic realm="git"')
                        self._cors()
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {"GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1",
                       "REQUEST_METHOD": self.command, "PATH_INFO": path,
                       "QUERY_STRING": query, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "REMOTE_USER": server.user or "",
                       "REMOTE_ADDR": "127.0.0.1", "PATH": "/usr/bin:/bin",
                       "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(server.root)}
                done = subprocess.run([BACKEND], input=body, env=env, capture_output=True,
                                      check=False)
                head, _, payload = done.stdout.partition(b"\r\n\r\n")
                status = 200
                headers = []
                for line in head.decode("latin1").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self._cors()
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def bare_repository(root: Path, name: str) -> Path:
    """A bare repository `name`.git under `root` with two commits on main and a branch,
    made by the host's git, that accepts pushes over HTTP."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Host", "GIT_AUTHOR_EMAIL": "host@example.com",
           "GIT_COMMITTER_NAME": "Host", "GIT_COMMITTER_EMAIL": "host@example.com"}
    work = root / f"{name}-work"
    work.mkdir(parents=True)

    def git(*args: str, cwd: Path = work) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (work / "README.md").write_text("# project\n")
    git("add", "-A")
    git("commit", "-qm", "start the project")
    (work / "app.py").write_text("print('hello')\n")
    git("add", "-A")
    git("commit", "-qm", "add the app")
    git("branch", "topic")
    bare = root / f"{name}.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=root)
    git("config", "http.receivepack", "true", cwd=bare)
    return bare
