"""The shell's runner over the sandbox (embed/worker/sandbox-client.mjs): before each
command the workspace's changes go to the sandbox, after it the command's come back
through :class:`harness.workspace.sandbox.SandboxView`, i.e. through the jail; a sandbox
replaced meanwhile is synced again, and a fresh one is preloaded while it waits. The
worker's adapter (:mod:`harness.runtime.pyodide`) makes it with the host's sandbox client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from ..config import ShellConfig
from ..workspace.sandbox import Changes, SandboxView
from . import CommandGate, ShellResult
from .worker_host import JsSandboxClient


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
