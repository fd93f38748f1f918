"""The in-worker runtime: the only module that handles JS objects.

``embed/worker/worker.mjs`` imports this module after loading the wheels and calls
:func:`start`, which builds the :class:`~harness.session.Session` from the page's
options and this worker's capabilities (:class:`JsRuntime`); from then on the worker
calls the returned :class:`WorkerBridge` for every page message. Arguments arrive as JS
values converted by Pyodide: strings, ``None`` and, for bytes, a ``JsProxy`` of a
``Uint8Array``. When the page enables the shell, the session asks for it at its
construction (:meth:`JsRuntime.shell`): the worker's ``host.sandbox()`` makes the client
of the sandbox, where every command runs (:class:`SandboxShell`).
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
from ..workspace.sandbox import Changes, SandboxView
from . import Approver, CommandGate, PageToolCaller, PageToolResult, ShellResult, Storage
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
        return SandboxShell(self._host.sandbox(), commands, SandboxView(workspace, self.journal),
                            config, packages)


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
        return [(str(k), str(p), None if s is None else str(s), str(c)) for k, p, s, c in raw], \
            bool(out.lost)

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


def _js_message(exc: Exception) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__


class SandboxShell:
    """The :class:`harness.runtime.ShellRunner` over the sandbox (embed/worker/sandbox-client.mjs):
    each command gets the workspace's changes first and brings its own back through
    :class:`harness.workspace.sandbox.SandboxView`, i.e. through the jail.

    The page can prompt only after ``ready``; the client waits for the sandbox the page
    starts then (its ``ready()``)."""

    def __init__(self, client: JsSandboxClient, commands: list[str], view: SandboxView,
                 config: ShellConfig, packages: list[tuple[str, str]] | None = None) -> None:
        self._client = client
        self._commands = commands
        self._packages = packages or []
        self._view = view
        self._config = config
        network = config.network.model_dump(by_alias=True) if config.network else None
        limits = {"timeoutMs": config.timeout_ms, "maxCommands": config.max_commands,
                  "maxOutputBytes": config.max_output_bytes, "network": network,
                  "indexUrls": config.packages.index_urls if config.packages else []}
        self._limits = json.dumps(limits)
        self._gated_limits = json.dumps({**limits, "gate": True})  # asks before each command
        self._synced: Any = None  # the sandbox generation the view describes
        self._lock = asyncio.Lock()  # one command or preload at a time
        self._preloading: asyncio.Future[None] | None = None
        watch = getattr(client, "watchReady", None)
        if watch is not None:  # a fresh sandbox gets its copy of /work while it waits
            try:
                from pyodide.ffi import create_proxy  # type: ignore[import-not-found]
            except ImportError:  # CPython, with a stand-in client (tests)
                watch(self._on_ready)
            else:
                watch(create_proxy(self._on_ready))

    @property
    def commands(self) -> list[str]:
        return self._commands

    @property
    def packages(self) -> list[tuple[str, str]]:
        return self._packages

    def _on_ready(self, generation: Any) -> None:
        if generation != self._synced and not self._lock.locked():
            self._preloading = asyncio.ensure_future(self._preload(generation))

    async def _preload(self, generation: Any) -> None:
        """Copy the workspace into a sandbox that just became ready (a spare swapped in
        after a run, a restart): the full copy then happens between runs, and the next
        command sends only what changed since."""
        async with self._lock:
            if generation != self._synced and generation == self._client.generation:
                self._view.invalidate()
                reply = await self._send("", generation, preload=True)
                if self._ok(reply):
                    self._synced = generation
                else:
                    self._view.invalidate()

    def restrict(self, hidden: Callable[[str], bool]) -> None:
        self._view.hidden = hidden
        self._view.invalidate()

    def _send(self, command: str, basis: Any, preload: bool = False,
              ask: Any = None) -> Any:
        out = self._view.outgoing()
        # The files' bytes go packed in one buffer (one copy into JS, one transfer,
        # whatever the count: a new sandbox's first copy may be the whole workspace).
        meta = json.dumps({"full": out.full, "dirs": out.dirs, "removed": out.removed,
                           "files": [path for path, _ in out.files],
                           "sizes": [len(data) for _, data in out.files]})
        limits = self._limits if ask is None else self._gated_limits
        return self._client.run(command, limits, meta,
                                b"".join(data for _, data in out.files), basis, preload, ask)

    @staticmethod
    def _ok(reply: Any) -> bool:
        return all(getattr(reply, key, None) is None for key in ("killed", "error", "stale"))

    async def run(self, command: str, gate: CommandGate | None = None) -> ShellResult:
        async with self._lock:
            asking = _CommandAsker(gate) if gate is not None and gate.asks_commands else None
            try:
                return await self._run(command, gate, asking)
            finally:
                if asking is not None:
                    asking.close()
                    if asking.ran_code:
                        # Code the model wrote ran in this sandbox (python3, pip): it
                        # could have changed how the sandbox asks. The next line gets a
                        # fresh one, so it can stop asking for the rest of its own line
                        # at most (the write and read rules hold regardless).
                        self._client.recycle()

    async def _run(self, command: str, gate: CommandGate | None,
                   asking: _CommandAsker | None) -> ShellResult:
        for _ in range(3):  # a sandbox replaced meanwhile: sync again, in full
            basis = await self._client.ready()
            if getattr(basis, "error", None) is not None:
                return ShellResult("", f"bash: {basis.error}\n", 1)
            if basis != self._synced:  # a fresh sandbox has an empty /work
                self._view.invalidate()
            try:
                reply = await self._send(command, basis,
                                         ask=None if asking is None else asking.proxy)
            except asyncio.CancelledError:
                self._client.cancel()
                self._view.invalidate()  # the command's changes will not be taken
                raise
            if getattr(reply, "stale", None) is None:
                break
            self._view.invalidate()
        else:
            return ShellResult("", "bash: the sandbox kept being replaced; try again\n", 1)
        self._synced = basis
        return await self._result(reply, gate)

    async def _writes_refused(self, changes: Changes, gate: CommandGate | None) -> str | None:
        """The read deny, then the write rule, on every path the command's changes reach,
        before any is taken."""
        refusal = self._view.hidden_refusal(changes)  # before anything about it is told
        if refusal is not None:
            return refusal
        if gate is None or not gate.asks_writes:
            return None
        paths = self._view.reached(changes)  # a folder that goes takes what is below it
        if not paths:
            return None
        refusal = await gate.writes_of(self._view.workspace, paths, dict(changes.files))
        if refusal is None:
            return None
        return f"{refusal}; none of the command's changes to /work were kept"

    async def _result(self, reply: Any, gate: CommandGate | None) -> ShellResult:
        killed = getattr(reply, "killed", None)
        error = getattr(reply, "error", None)
        if killed is not None or error is not None:
            self._view.invalidate()
            if killed == "timeout":
                return ShellResult("", f"bash: timed out after {self._config.timeout_ms} ms; "
                                   "the sandbox was stopped and restarted (its /tmp is empty "
                                   "again; this command's changes to /work were lost)\n",
                                   124, timed_out=False)
            if killed is not None:
                why = _KILLED.get(killed, killed)
                return ShellResult("", f"bash: the sandbox was stopped ({why}); this "
                                   "command's changes to /work were lost\n", 1)
            return ShellResult("", f"bash: {error}\n", 1)
        changes = _changes(json.loads(str(reply.meta)), reply.datas)
        refused = await self._writes_refused(changes, gate)
        if refused is not None:
            self._view.invalidate()  # the sandbox holds changes the workspace refused
            notes = [refused]
        else:
            notes = self._view.apply(changes, self._config.max_output_bytes)
        if self._view.conflicts:  # the page hears of it too (h.diagnostics)
            kept = self._view.conflicts
            self._client.report("sandbox_conflict", "kept the workspace's newer version of "
                                f"{len(kept)} path(s) a command also changed: "
                                + ", ".join(kept[:20]))
        stderr = str(reply.stderr) + "".join(f"bash: {note}\n" for note in notes)
        return ShellResult(str(reply.stdout), stderr, int(reply.exitCode), bool(reply.timedOut))


class _CommandAsker:
    """The ``bash`` rule as the sandbox runs a line: a JS function the sandbox client
    calls with each simple command (sandbox-client.mjs ``gate``), answering with a
    promise of the refusal or undefined. Its questions belong to the tool call: a
    cancelled call cancels them (an approval waiting then ends as a deny)."""

    def __init__(self, gate: CommandGate) -> None:
        self._gate = gate
        self._asking: set[asyncio.Future[str | None]] = set()
        self.ran_code = False  # a command that runs the model's own code was asked about
        self.proxy: Any = self._ask
        try:
            from pyodide.ffi import create_proxy
        except ImportError:  # CPython, with a stand-in client (tests)
            return
        self.proxy = create_proxy(self._ask)

    def _ask(self, command: Any, argv: Any = None) -> asyncio.Future[str | None]:
        words = [] if argv is None else [str(w) for w in (argv.to_py() if hasattr(argv, "to_py")
                                                         else argv)]
        if words and words[0] in _RUNS_CODE:
            self.ran_code = True
        future = asyncio.ensure_future(self._gate.command(str(command), words))
        self._asking.add(future)
        future.add_done_callback(self._asking.discard)
        return future

    def close(self) -> None:
        for future in list(self._asking):
            future.cancel()
        destroy = getattr(self.proxy, "destroy", None)
        if destroy is not None:
            destroy()


# The sandbox's commands that run code the model wrote, which owns the sandbox after.
_RUNS_CODE = frozenset({"python3", "python", "pip", "pip3"})

# Why the harness tore a sandbox down during a command (embed/worker/sandbox-client.mjs).
_KILLED = {
    "flood": "it sent more messages than one command may",
    "forged": "it sent a result for another command",
    "malformed": "it sent a message the harness does not take",
    "spoke": "it sent a message while no command was running",
    "cancelled": "the run was cancelled and the command did not stop",
    "restarted": "the page replaced it",
}


def _changes(meta: dict[str, Any], datas: Any) -> Changes:
    data = [bytes(d.to_bytes()) for d in datas]
    return Changes(dirs=list(meta["dirs"]), files=list(zip(meta["files"], data, strict=True)),
                   removed=list(meta["removed"]), skipped=list(meta["skipped"]))


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

    def fs(self, request_json: str, data: Any = None, cause: str | None = None,
           of_call: bool = False) -> bytes | str:
        raw = None if data is None else bytes(data.to_bytes())
        return self.session.fs(request_json, raw, cause, of_call)

    def announce(self, cause: str) -> None:
        """What a page call the worker answered itself (a plain writeFile) changed."""
        self.session.announce(cause)

    def prompt(self, run_id: str, text: str, attachments_json: str = "[]") -> None:
        self.session.prompt(run_id, text, attachments_json)

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
