"""The shell's runner over the sandbox: before each command the workspace's changes go
to the sandbox, after it the command's come back through
:class:`harness.workspace.sandbox.SandboxView`, i.e. through the jail; a sandbox replaced
meanwhile is synced again, and a fresh one is preloaded while it waits.

It talks to the sandbox through :class:`SandboxClient`, in Python values: the worker's
adapter (:class:`harness.runtime.pyodide.JsSandbox`, over embed/worker/sandbox-client.mjs)
does the conversions, so nothing here handles a JS object.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..config import ShellConfig
from ..workspace.sandbox import Changes, Outgoing, SandboxView
from . import CommandGate, ShellResult

KILLED_TIMEOUT = "timeout"
"""The one kill reason this side tells apart (the others it passes on with their ``why``):
the name of ``KILL.TIMEOUT`` in embed/worker/sandbox-client.mjs's table (held to it by
tests/test_worker_host.py)."""

SANDBOX_CONFLICT = "sandbox_conflict"
"""The page's diagnostic code for a command's change that lost to a newer write:
``CODE.SANDBOX_CONFLICT`` of embed/shared/protocol.mjs (held to it by
tests/test_worker_host.py)."""

Ask = Callable[[str, list[str]], Awaitable[str | None]]
"""Asked before each simple command of a gated line: ``(text, argv)`` → refusal or None."""


@dataclass(frozen=True)
class SandboxReply:
    """What one run in the sandbox came to: the command's result and changes, or
    ``killed`` (the harness tore the sandbox down during it: why), ``error`` (it could
    not run), ``stale`` (another sandbox is attached: sync again, in full)."""

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    timed_out: bool = False
    changes: Changes = field(default_factory=Changes)
    killed: str | None = None  # the reason's name (sandbox-client.mjs KILL)
    why: str | None = None  # what the model is told of it
    error: str | None = None
    stale: bool = False

    @property
    def ok(self) -> bool:
        return self.killed is None and self.error is None and not self.stale


class SandboxUnavailable(Exception):
    """No sandbox could be had (it did not start in time, or failed twice)."""


class SandboxClient(Protocol):
    """The harness worker's end of the sandbox, in Python values (embed/worker/sandbox-client.mjs
    through :class:`harness.runtime.pyodide.JsSandbox`; a stand-in in the tests).

    Contract: ``run`` never raises for what the sandbox does (a kill, a malformed result
    are a :class:`SandboxReply`); it raises ``asyncio.CancelledError`` when the awaiting
    task is cancelled (the caller then calls ``cancel``).
    """

    @property
    def generation(self) -> int:
        """The sandbox now attached (a new one has an empty /work)."""

    def watch_ready(self, fn: Callable[[int], None]) -> None:
        """Call ``fn(generation)`` each time a sandbox becomes ready."""

    async def ready(self) -> int:
        """Wait for a ready sandbox; its generation. Raises :class:`SandboxUnavailable`."""

    async def run(self, command: str, limits: dict[str, Any], sync: Outgoing, basis: int,
                  preload: bool = False, ask: Ask | None = None) -> SandboxReply:
        """Run one command line after the sync (computed for generation ``basis``);
        ``preload``: the sync only, with no command. ``ask``: with ``limits["gate"]``."""

    def cancel(self) -> None:
        """The run was cancelled: stop the command (the sandbox is killed if it does not)."""

    def report(self, code: str, message: str) -> None:
        """A diagnostic for the page (``h.diagnostics``)."""

    def recycle(self) -> None:
        """Replace the sandbox if it ran the model's code."""


class SandboxShell:
    """The :class:`harness.runtime.ShellRunner` over the sandbox (embed/worker/sandbox-client.mjs):
    each command gets the workspace's changes first and brings its own back through
    :class:`harness.workspace.sandbox.SandboxView`, i.e. through the jail.

    The page can prompt only after ``ready``; the client waits for the sandbox the page
    starts then (its ``ready()``)."""

    def __init__(self, client: SandboxClient, commands: list[str], view: SandboxView,
                 config: ShellConfig, packages: list[tuple[str, str]] | None = None) -> None:
        self._client = client
        self._commands = commands
        self._packages = packages or []
        self._view = view
        self._config = config
        network = config.network.model_dump(by_alias=True) if config.network else None
        limits = {"timeoutMs": config.timeout_ms, "maxCommands": config.max_commands,
                  "maxOutputBytes": config.max_output_bytes, "network": network,
                  "indexUrls": config.packages.index_urls if config.packages else [],
                  "gitAuthor": config.git.author.model_dump()}
        self._limits: dict[str, Any] = limits
        self._gated_limits = {**limits, "gate": True}  # asks before each command
        self._synced: int | None = None  # the sandbox generation the view describes
        self._lock = asyncio.Lock()  # one command or preload at a time
        self._preloading: asyncio.Future[None] | None = None
        client.watch_ready(self._on_ready)  # a fresh sandbox gets /work while it waits

    @property
    def commands(self) -> list[str]:
        return self._commands

    @property
    def packages(self) -> list[tuple[str, str]]:
        return self._packages

    def _on_ready(self, generation: int) -> None:
        if generation != self._synced and not self._lock.locked():
            self._preloading = asyncio.ensure_future(self._preload(generation))

    async def _preload(self, generation: int) -> None:
        """Copy the workspace into a sandbox that just became ready (a spare swapped in
        after a run, a restart): the full copy then happens between runs, and the next
        command sends only what changed since."""
        async with self._lock:
            if generation != self._synced and generation == self._client.generation:
                self._view.invalidate()
                reply = await self._send("", generation, preload=True)
                if reply.ok:
                    self._synced = generation
                else:
                    self._view.invalidate()

    def restrict(self, hidden: Callable[[str], bool]) -> None:
        self._view.hidden = hidden
        self._view.invalidate()

    def _send(self, command: str, basis: int, preload: bool = False,
              ask: Ask | None = None) -> Awaitable[SandboxReply]:
        limits = self._limits if ask is None else self._gated_limits
        return self._client.run(command, limits, self._view.outgoing(), basis, preload, ask)

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
            try:
                basis = await self._client.ready()
            except SandboxUnavailable as exc:
                return ShellResult("", f"bash: {exc}\n", 1)
            if basis != self._synced:  # a fresh sandbox has an empty /work
                self._view.invalidate()
            try:
                reply = await self._send(command, basis,
                                         ask=None if asking is None else asking.ask)
            except asyncio.CancelledError:
                self._client.cancel()
                self._view.invalidate()  # the command's changes will not be taken
                raise
            if not reply.stale:
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

    async def _result(self, reply: SandboxReply, gate: CommandGate | None) -> ShellResult:
        killed, error = reply.killed, reply.error
        if killed is not None or error is not None:
            self._view.invalidate()
            if killed == KILLED_TIMEOUT:
                return ShellResult("", f"bash: timed out after {self._config.timeout_ms} ms; "
                                   "the sandbox was stopped and restarted (its /tmp is empty "
                                   "again; this command's changes to /work were lost)\n",
                                   124, timed_out=False)
            if killed is not None:
                why = reply.why or killed
                return ShellResult("", f"bash: the sandbox was stopped ({why}); this "
                                   "command's changes to /work were lost\n", 1)
            return ShellResult("", f"bash: {error}\n", 1)
        changes = reply.changes
        refused = await self._writes_refused(changes, gate)
        if refused is not None:
            self._view.invalidate()  # the sandbox holds changes the workspace refused
            notes = [refused]
        else:
            notes = self._view.apply(changes, self._config.max_output_bytes)
        if self._view.conflicts:  # the page hears of it too (h.diagnostics)
            kept = self._view.conflicts
            self._client.report(SANDBOX_CONFLICT, "kept the workspace's newer version of "
                                f"{len(kept)} path(s) a command also changed: "
                                + ", ".join(kept[:20]))
        stderr = reply.stderr + "".join(f"bash: {note}\n" for note in notes)
        return ShellResult(reply.stdout, stderr, reply.exit_code, reply.timed_out)


class _CommandAsker:
    """The ``bash`` rule as the sandbox runs a line: ``ask`` is called with each simple
    command (sandbox-client.mjs ``gate``), answering with a future of the refusal or
    None. Its questions belong to the tool call: a cancelled call cancels them (an
    approval waiting then ends as a deny)."""

    def __init__(self, gate: CommandGate) -> None:
        self._gate = gate
        self._asking: set[asyncio.Future[str | None]] = set()
        self.ran_code = False  # a command that runs the model's own code was asked about

    def ask(self, command: str, argv: list[str]) -> asyncio.Future[str | None]:
        if argv and argv[0] in _RUNS_CODE:
            self.ran_code = True
        future = asyncio.ensure_future(self._gate.command(command, argv))
        self._asking.add(future)
        future.add_done_callback(self._asking.discard)
        return future

    def close(self) -> None:
        for future in list(self._asking):
            future.cancel()


# The sandbox's commands that run code the model wrote, which owns the sandbox after.
_RUNS_CODE = frozenset({"python3", "python", "pip", "pip3"})
