"""The in-worker runtime: the only module that handles JS objects.

``embed/worker.mjs`` imports this module after loading the wheels and calls
:func:`start`; from then on it calls the returned :class:`WorkerBridge` for every page
message. Arguments arrive as JS values converted by Pyodide: strings, ``None`` and, for
bytes, a ``JsProxy`` of a ``Uint8Array``. When the page enables the shell, the worker
also hands in the just-bash shell (:class:`JsShell`) and calls :func:`shell_resolve`
and :func:`run_python` from it.
"""

from __future__ import annotations

import asyncio
import errno
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from ..errors import FsError
from ..jail import Workspace
from ..pyexec import run_python as _run_python
from ..session import Session
from ..shell import ShellResult
from ..transport import HttpRequest, HttpResponse, Transport, TransportError
from . import PageToolCaller

WORKSPACE_ROOT = "/work"
# What the shell sees: the workspace and a scratch /tmp, under the same jail.
_shell_jail: Workspace | None = None


class JsRuntime:
    """The worker's side of the seam: ``post`` sends to the page, ``host`` is the JS
    object from worker.mjs with ``http`` (embed/http.mjs) and the page-tool calls."""

    def __init__(self, post: Any, host: Any) -> None:
        self._post = post
        self._transport = JsHttpTransport(host.http)
        self._page_tools = JsPageTools(host)

    def post(self, message_json: str) -> None:
        self._post(message_json)

    @property
    def transport(self) -> Transport:
        return self._transport

    @property
    def page_tools(self) -> PageToolCaller | None:
        return self._page_tools


class JsHttpTransport:
    """:class:`harness.transport.Transport` over the worker's (or the page's) fetch."""

    def __init__(self, http: Any) -> None:
        self._http = http

    async def send(self, request: HttpRequest) -> HttpResponse:
        body = request.body.decode("utf-8") if request.body else None
        try:
            head = await self._http.open(request.url, request.method,
                                         json.dumps(request.headers), body)
        except Exception as exc:  # a JsException: network failure, CORS, refused
            raise TransportError(_js_message(exc)) from None
        headers = {k.lower(): v for k, v in json.loads(head.headers).items()}
        return _JsResponse(self._http, int(head.id), int(head.status), headers)


class _JsResponse:
    def __init__(self, http: Any, stream_id: int, status: int, headers: dict[str, str]) -> None:
        self._http = http
        self._id = stream_id
        self.status = status
        self.headers: Mapping[str, str] = headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        while True:
            try:
                chunk = await self._http.read(self._id)
            except Exception as exc:
                raise TransportError(f"the connection was cut: {_js_message(exc)}") from None
            if chunk is None:
                return
            yield bytes(chunk.to_bytes())

    async def aclose(self) -> None:
        self._http.close(self._id)


class JsPageTools:
    """:class:`harness.runtime.PageToolCaller` over worker.mjs's toolcall messages."""

    def __init__(self, host: Any) -> None:
        self._host = host

    async def call(self, name: str, input_json: str) -> tuple[str, bool]:
        handle = self._host.callPageTool(name, input_json)
        try:
            result = await handle.promise
        except asyncio.CancelledError:
            self._host.cancelPageTool(handle.id)
            raise
        return str(result.output), bool(not result.ok)


def _js_message(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


class JsShell:
    """The :class:`harness.shell.ShellRunner` over shell/shell.mjs's ``createShell``."""

    def __init__(self, js_shell: Any) -> None:
        self._js = js_shell
        self._commands = [str(c) for c in js_shell.commands]

    @property
    def commands(self) -> list[str]:
        return self._commands

    async def run(self, command: str) -> ShellResult:
        try:
            r = await self._js.run(command)
        except asyncio.CancelledError:
            self._js.cancel()
            raise
        return ShellResult(str(r.stdout), str(r.stderr), int(r.exitCode), bool(r.timedOut))


class WorkerBridge:
    def __init__(self, session: Session) -> None:
        self.session = session

    def fs(self, request_json: str, data: Any = None) -> bytes | str:
        raw = None if data is None else bytes(data.to_bytes())
        return self.session.fs(request_json, raw)

    def prompt(self, run_id: str, text: str) -> None:
        self.session.prompt(run_id, text)

    def cancel(self, run_id: str | None = None) -> bool:
        return self.session.cancel(run_id)

    def tool_specs(self) -> str:
        """The tools exactly as the model is told about them, JSON."""
        return json.dumps([{"name": t.name, "description": t.description,
                            "parameters": t.parameters}
                           for t in self.session.agent.tools.specs()])

    def shell_limits(self) -> str | None:
        """The validated shell settings as JSON, or None when the shell is off."""
        config = self.session.shell_config
        return None if config is None else config.model_dump_json(by_alias=True)

    def attach_shell(self, js_shell: Any) -> None:
        self.session.attach_shell(JsShell(js_shell))


def start(config_json: str, post: Any, host: Any) -> WorkerBridge:
    """Create the session for this worker (raises ``UsageError`` on bad options)."""
    return WorkerBridge(Session.create(config_json, WORKSPACE_ROOT, JsRuntime(post, host)))


def _jail() -> Workspace:
    global _shell_jail
    if _shell_jail is None:
        _shell_jail = Workspace(WORKSPACE_ROOT, {"/tmp": "/tmp"})
    return _shell_jail


def shell_resolve(path: str) -> str | None:
    """The real path of a shell path, or None outside /work and /tmp (the shell then
    reports "no such file or directory")."""
    try:
        return _jail().resolve(path).real
    except FsError:
        return None


def errno_names() -> str:
    """Errno number → name in this runtime (Emscripten numbers them its own way), JSON."""
    return json.dumps(errno.errorcode)


def run_python(request_json: str) -> str:
    """``python3 ...`` from the shell: ``{args, cwd, stdin, timeoutMs}`` → result JSON."""
    request = json.loads(request_json)
    result = _run_python(request["args"], request["stdin"], request["cwd"],
                         request["timeoutMs"] / 1000, _jail())
    return json.dumps({"stdout": result.stdout, "stderr": result.stderr,
                       "exitCode": result.exit_code})
