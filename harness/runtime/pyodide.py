"""The in-worker runtime: the only module that handles JS objects.

The worker's boot (``embed/worker/worker-boot.mjs``) imports this module after loading
the wheels and calls :func:`start`, which builds the :class:`~harness.session.Session`
from the page's options and this worker's capabilities (:class:`JsRuntime`); from then
on the worker calls the returned :class:`WorkerBridge` for every page message.
Arguments arrive as JS values converted by Pyodide: strings, ``None`` and, for bytes, a
``JsProxy`` of a ``Uint8Array``. When the page enables the shell, the session asks for it at its
construction (:meth:`JsRuntime.shell`): the worker's ``host.sandbox()`` makes the client
of the sandbox, where every command runs
(:class:`harness.runtime.sandbox_shell.SandboxShell`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from ..config import ShellConfig
from ..session import Session
from ..transport import HttpRequest, HttpResponse, Transport, TransportError
from ..workspace.jail import Workspace
from ..workspace.journal import Before, Journal
from ..workspace.sandbox import Changes, Outgoing, SandboxView
from . import Approver, PageToolCaller, PageToolResult, Storage
from .sandbox_shell import Ask, SandboxReply, SandboxShell, SandboxUnavailable
from .worker_host import JsHttp, JsJournalFeed, JsSandboxClient, WorkerHost

# /state is beside /work, not in it: the model's tools cannot reach the threads. Both are
# written through to OPFS by embed/persist.mjs.
STORAGE = Storage(workspace="/work", threads="/state/threads")


class JsRuntime:
    """The worker's capabilities: ``post`` sends to the page, ``host`` is the JS object
    from worker.mjs (:class:`~harness.runtime.worker_host.WorkerHost`: ``http``, the
    journal's feed, the page-tool and approval calls, the shell's ``sandbox()`` and what
    the sandbox has)."""

    def __init__(self, post: Callable[[str], None], host: WorkerHost) -> None:
        self._post = post
        self._host = host
        self._transport = JsHttpTransport(host.http)
        self._page_tools = JsPageTools(host)
        self._approvals = JsApprovals(host)
        self._journal: Journal | None = None

    def post(self, message_json: str) -> None:
        self._post(message_json)

    @property
    def transport(self) -> Transport:
        return self._transport

    @property
    def page_tools(self) -> PageToolCaller | None:
        return self._page_tools

    @property
    def approvals(self) -> Approver | None:
        return self._approvals

    @property
    def storage(self) -> Storage:
        return STORAGE

    @property
    def journal(self) -> Journal:
        """Fed by the filesystem's hooks (embed/worker/journal.mjs)."""
        if self._journal is None:
            self._journal = Journal(JsFeed(self._host.journal))
        return self._journal

    def shell(self, config: ShellConfig, workspace: Workspace) -> SandboxShell:
        commands = [str(c) for c in self._host.shellCommands]
        packages = [(str(n), str(v)) for n, v in self._host.shellPackages]
        return SandboxShell(JsSandbox(self._host.sandbox()), commands,
                            SandboxView(workspace, self.journal), config, packages)

    def run_ended(self) -> None:
        self._host.runEnded()


class JsFeed:
    """:class:`harness.workspace.journal.Feed` over embed/worker/journal.mjs's feed."""

    def __init__(self, feed: JsJournalFeed) -> None:
        self._feed = feed

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]:
        out = self._feed.drain()
        records = out.records
        if records.length == 0:
            return [], bool(out.lost)
        raw = records.to_py()
        # (a record's source is null but for a rename: jsnull here, not None)
        return [(str(k), str(p), s if isinstance(s, str) else None, str(c))
                for k, p, s, c in raw], bool(out.lost)

    def set_cause(self, cause: str, capture: bool = False) -> None:
        self._feed.setCause(cause, capture)

    def new_epoch(self) -> None:
        self._feed.newEpoch()

    def befores(self) -> list[Before]:
        taken = self._feed.befores()
        if taken.length == 0:
            return []
        out: list[Before] = []
        for path, kind, data, mode, complete in taken.to_py():
            out.append((str(path), str(kind), None if data is None else bytes(data),
                        None if mode is None else int(mode), bool(complete)))
        return out


class JsHttpTransport:
    """:class:`harness.transport.Transport` over the worker's (or the page's) fetch."""

    def __init__(self, http: JsHttp) -> None:
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
    def __init__(self, http: JsHttp, stream_id: int, status: int,
                 headers: dict[str, str]) -> None:
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

    def __init__(self, host: WorkerHost) -> None:
        self._host = host

    async def call(self, name: str, input_json: str) -> PageToolResult:
        handle = self._host.callPageTool(name, input_json)
        try:
            result = await handle.promise
        except asyncio.CancelledError:
            self._host.cancelPageTool(handle.id)
            raise
        images = getattr(result, "images", None)
        return str(result.output), bool(not result.ok), "[]" if images is None else str(images)


class JsApprovals:
    """:class:`harness.runtime.Approver` over worker.mjs's approval messages."""

    def __init__(self, host: WorkerHost) -> None:
        self._host = host

    async def ask(self, request_json: str) -> tuple[str, str | None]:
        handle = self._host.askApproval(request_json)
        try:
            answer = await handle.promise
        except asyncio.CancelledError:
            self._host.cancelApproval(handle.id)
            raise
        message = getattr(answer, "message", None)
        return str(answer.decision), None if message is None else str(message)


class JsSandbox:
    """:class:`harness.runtime.sandbox_shell.SandboxClient` over the worker's client of
    the sandbox (embed/worker/sandbox-client.mjs): Python values in, Python values out.

    What crosses, once each way: the sync's lists as one JS object and the files' bytes
    packed in one buffer (one copy into JS, transferred to the sandbox, whatever the
    count: a new sandbox's first copy may be the whole workspace); back, the command's
    changes as JS arrays (the paths taken in one conversion) and each file's bytes
    copied once into Python. No JSON text on either way."""

    def __init__(self, client: JsSandboxClient) -> None:
        self._client = client

    @property
    def generation(self) -> int:
        return int(self._client.generation)

    def watch_ready(self, fn: Callable[[int], None]) -> None:
        self._client.watchReady(_proxy(lambda generation: fn(int(generation))))

    async def ready(self) -> int:
        answer = await self._client.ready()
        error = getattr(answer, "error", None)
        if error is not None:
            raise SandboxUnavailable(str(error))
        return int(answer)

    async def run(self, command: str, limits: dict[str, Any], sync: Outgoing, basis: int,
                  preload: bool = False, ask: Ask | None = None) -> SandboxReply:
        meta = {"full": sync.full, "dirs": sync.dirs, "removed": sync.removed,
                "files": [path for path, _ in sync.files],
                "sizes": [len(data) for _, data in sync.files]}
        packed = b"".join(data for _, data in sync.files)
        gate = None if ask is None else _proxy(
            lambda text, argv=None: ask(str(text), [] if argv is None else [str(w) for w in argv]))
        try:
            reply = await self._client.run(command, _to_js(limits), _to_js(meta), packed, basis,
                                           preload, gate)
        finally:
            if gate is not None and hasattr(gate, "destroy"):
                gate.destroy()
        return _sandbox_reply(reply)

    def cancel(self) -> None:
        self._client.cancel()

    def report(self, code: str, message: str) -> None:
        self._client.report(code, message)

    def recycle(self) -> None:
        self._client.recycle()


def _sandbox_reply(reply: Any) -> SandboxReply:
    """The client's answer (sandbox-client.mjs ``run``) as Python values."""
    killed = getattr(reply, "killed", None)
    if killed is not None:
        why = getattr(reply, "why", None)
        return SandboxReply(killed=str(killed), why=None if why is None else str(why))
    error = getattr(reply, "error", None)
    if error is not None:
        return SandboxReply(error=str(error))
    if getattr(reply, "stale", None) is not None:
        return SandboxReply(stale=True)
    changes = reply.changes
    files = zip(_strings(changes.paths), (bytes(d.to_bytes()) for d in changes.datas),
                strict=True)
    return SandboxReply(stdout=str(reply.stdout), stderr=str(reply.stderr),
                        exit_code=int(reply.exitCode), timed_out=bool(reply.timedOut),
                        changes=Changes(dirs=_strings(changes.dirs), files=list(files),
                                        removed=_strings(changes.removed),
                                        skipped=_strings(changes.skipped)))


def _strings(array: Any) -> list[str]:
    """A JS array of strings as a list, in one conversion."""
    return [str(s) for s in (array.to_py() if hasattr(array, "to_py") else array)]


def _proxy(fn: Callable[..., Any]) -> Any:
    """``fn`` as a JS function that outlives this call (destroyed by its owner)."""
    try:
        from pyodide.ffi import create_proxy  # type: ignore[import-not-found]
    except ImportError:  # CPython, with stand-ins (tests)
        return fn
    return create_proxy(fn)


def _to_js(value: dict[str, Any]) -> Any:
    """A JSON-like dict as a plain JS object (nested lists as arrays)."""
    try:
        import js  # type: ignore[import-not-found]
        from pyodide.ffi import to_js
    except ImportError:  # CPython, with stand-ins (tests)
        return value
    return to_js(value, dict_converter=js.Object.fromEntries)


def _js_message(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


class WorkerBridge:
    """What worker.mjs calls: each method one page message, the session's answer."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def threads(self, request_json: str) -> str:
        """One ``h.threads`` call (JSON in, JSON out)."""
        return self.session.threads(request_json)

    def checkpoint(self, request_json: str) -> str:
        """One ``h.revert`` / ``h.diff`` / ``h.checkpoints`` call (JSON in, JSON out)."""
        return self.session.checkpoint(request_json)

    def usage(self, request_json: str) -> str:
        """One ``h.usage`` / ``h.setBudget`` call (JSON in, JSON out)."""
        return self.session.usage(request_json)

    def preview(self, request_json: str) -> bytes | str:
        """One request of the page's preview (harness/preview.py): a file's bytes, or JSON."""
        return self.session.preview.answer(request_json)

    def fs(self, request_json: str, data: Any = None, cause: str | None = None,
           of_call: bool = False) -> bytes | str:
        raw = None if data is None else bytes(data.to_bytes())
        return self.session.fs(request_json, raw, cause, of_call)

    def announce(self, cause: str) -> None:
        """What a page call the worker answered itself (a plain writeFile) changed."""
        self.session.announce(cause)

    def prompt(self, run_id: str, text: str, attachments_json: str = "[]",
               options_json: str = "{}") -> None:
        self.session.prompt(run_id, text, attachments_json, options_json)

    def cancel(self, run_id: str | None = None) -> bool:
        return self.session.cancel(run_id)

    def tool_specs(self) -> str:
        """The tools exactly as the model is told about them, JSON."""
        return json.dumps([{"name": t.name, "description": t.description,
                            "parameters": t.parameters}
                           for t in self.session.agent.tools.specs()])


def start(config_json: str, post: Callable[[str], None], host: WorkerHost) -> WorkerBridge:
    """Create the session for this worker (raises ``UsageError`` on bad options)."""
    return WorkerBridge(Session.from_options(config_json, JsRuntime(post, host)))
