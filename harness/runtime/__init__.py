"""The runtime seam: everything that differs between Pyodide-in-a-worker and CPython.

The core never imports ``js`` or ``pyodide``. It is handed a :class:`Runtime`, which is
every capability a session takes from where it runs, in one object: where events go
(``post``), HTTP for the models (``transport``), the page's tools, the shell's runner
and the storage. :class:`harness.session.Session` builds everything else from the
page's options and these. :mod:`harness.runtime.pyodide` is the in-worker
implementation (the only module that touches JS objects), :mod:`harness.runtime.native`
the CPython one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..transport import Transport

if TYPE_CHECKING:
    from ..config import ShellConfig
    from ..workspace.jail import Workspace
    from ..workspace.journal import Journal


@dataclass(frozen=True)
class ShellResult:
    """One command line's outcome, as the shell tool reads it."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False


class CommandGate(Protocol):
    """The permission rules at the points of effect of one command line
    (:class:`harness.policy.enforce.LineGate`): ``command`` before each simple command runs
    (when ``asks_commands``), ``writes_of`` before the command's changes are taken into
    /work (when ``asks_writes``); each returns None to go on, else why not."""

    asks_commands: bool
    asks_writes: bool

    async def command(self, text: str, argv: Sequence[str] = ()) -> str | None: ...

    async def writes_of(self, workspace: Workspace, paths: Iterable[str],
                        contents: dict[str, bytes]) -> str | None: ...


class ShellRunner(Protocol):
    """Runs one command line in the shell (just-bash in the sandbox: shell/sandbox.mjs).

    Contract: never raises for a failing command (that is a non-zero exit code); raises
    ``asyncio.CancelledError`` when the run is cancelled, after aborting the command.
    ``commands`` is what the system prompt lists (empty: "the usual coreutils");
    ``packages`` what the bundle's package index ships, (name, version) each.
    ``gate``: the permission rules to apply as the line runs (None: none apply).
    ``restrict(hidden)``: the /work paths the ``read`` rule denies, which the shell must
    never be given nor change; called once, before any command.
    """

    @property
    def commands(self) -> list[str]: ...

    @property
    def packages(self) -> list[tuple[str, str]]: ...

    async def run(self, command: str, gate: CommandGate | None = None) -> ShellResult: ...

    def restrict(self, hidden: Callable[[str], bool]) -> None: ...


PageToolResult = tuple[str, bool] | tuple[str, bool, str]
"""``(output, is_error)``, or with the images the tool showed: JSON
``[{mediaType, data}]`` (an MCP tool's, embed/page/mcp.mjs)."""


class PageToolCaller(Protocol):
    """Runs a tool that the page defined (its ``run`` is JavaScript on the page).

    Contract: returns a :data:`PageToolResult`; a throw on the page is ``is_error``. When
    the awaiting task is cancelled (run cancelled, tool timeout), the page's ``signal``
    is aborted and ``asyncio.CancelledError`` propagates; a late answer is dropped.
    """

    async def call(self, name: str, input_json: str) -> PageToolResult: ...


class Approver(Protocol):
    """Asks the page whether a call may run (its ``onApproval``; harness/policy/approvals.py).

    Contract: returns ``(decision, message)``, decision one of "once", "always", "deny"
    (the page turns a throw, a bad answer or a missing ``onApproval`` into "deny" with a
    message). When the awaiting task is cancelled (the run cancelled, the approval
    timed out), the page's ``signal`` is aborted and ``asyncio.CancelledError``
    propagates; a late answer is dropped.
    """

    async def ask(self, request_json: str) -> tuple[str, str | None]: ...


@dataclass(frozen=True)
class Storage:
    """Where a session keeps its state: ``workspace`` is the directory the model sees as
    ``/work``; ``threads`` the directory of the conversations (harness/threads.py), or
    None to keep them in memory, for the session's life only. In the worker these are
    ``/work`` and ``/state/threads`` (written through to OPFS by embed/worker/persist.mjs);
    never put ``threads`` inside ``workspace``, where the model's tools could rewrite
    its own history."""

    workspace: str
    threads: str | None = None


class Runtime(Protocol):
    def post(self, message_json: str) -> None:
        """Send one JSON message to the page (events of a run)."""

    @property
    def transport(self) -> Transport:
        """HTTP for the model providers."""

    @property
    def page_tools(self) -> PageToolCaller | None:
        """The page's tools, where there is a page (None on CPython)."""

    @property
    def approvals(self) -> Approver | None:
        """Who answers a permission rule's ``ask`` (the page), or None (CPython: every
        ``ask`` is then a deny that says there is no page to ask)."""

    @property
    def storage(self) -> Storage:
        """Where the workspace and the threads are kept."""

    @property
    def journal(self) -> Journal:
        """The change journal of the storage's workspace (harness/workspace/journal.py)."""

    def shell(self, config: ShellConfig, workspace: Workspace) -> ShellRunner | None:
        """The runner for a shell with these limits over this workspace, asked for only
        when the page turned the shell on; None where there is no shell (the session
        then leaves the tool out and the system prompt says so)."""

    def run_ended(self) -> None:
        """A run ended (the session calls it once its last event is posted): what the run
        used that must not outlive it is let go. In the worker, a sandbox that ran the
        model's code is replaced (embed/worker/sandbox-client.mjs ``recycle``), so
        nothing one run did there reaches a later run or another thread; on CPython,
        nothing."""
