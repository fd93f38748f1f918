"""The seam between the worker's JavaScript and Python, typed: what Python calls on the
``host`` object embed/worker/worker.mjs hands to :func:`harness.runtime.pyodide.start`,
with the argument and return types as Pyodide shows them to Python.

The other half is the JSDoc ``@typedef WorkerHost`` in embed/worker/worker-boot.mjs,
where the object is built (``startHarness``) and ``tsc --checkJs`` holds it to the typedef: the
member names of the two are the same, and tests/test_worker_host.py holds them in step. Nothing here
imports ``js`` or ``pyodide``; these are Protocols a ``JsProxy`` satisfies, and the
CPython tests' stand-ins satisfy too (tests/test_worker_runtime.py).

JS values reach Python as Pyodide converts them: strings, numbers, booleans and
``None`` as themselves; arrays and objects as proxies (:class:`JsArray`, attribute
access); a ``Uint8Array`` as :class:`JsBytes`; a promise as an awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T_co = TypeVar("T_co", covariant=True)


class JsArray(Protocol[T_co]):
    """A JS array as Python sees it (a ``JsProxy``): its length, its items, a copy."""

    @property
    def length(self) -> int: ...

    def __iter__(self) -> Iterator[T_co]: ...

    def to_py(self) -> Sequence[T_co]: ...


class JsBytes(Protocol):
    """A ``Uint8Array``: ``to_bytes`` is its one copy into Python."""

    def to_bytes(self) -> bytes: ...


# -- http (embed/worker/http.mjs) ---------------------------------------------------------


class HttpHead(Protocol):
    """What ``http.open`` resolves with: the request's id, status and headers (JSON text)."""

    @property
    def id(self) -> int: ...

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> str: ...


class JsHttp(Protocol):
    """HTTP through the page's fetch (embed/worker/http.mjs, ``createHttp``)."""

    def open(self, url: str, method: str, headers_json: str,
             body: str | None) -> Awaitable[HttpHead]: ...

    def read(self, id: int) -> Awaitable[JsBytes | None]: ...

    def close(self, id: int) -> None: ...


# -- the change journal's feed (embed/worker/journal.mjs) -----------------------------------


class FeedDrain(Protocol):
    """``records``: ``[kind, path, source | null, cause]`` each; ``lost``: some were dropped."""

    @property
    def records(self) -> JsArray[Sequence[Any]]: ...

    @property
    def lost(self) -> bool: ...


class JsJournalFeed(Protocol):
    """Every change to /work, as the filesystem's hooks tell it (``journalFeed``)."""

    def drain(self) -> FeedDrain: ...

    def setCause(self, cause: str, capture: bool) -> None: ...

    def newEpoch(self) -> None: ...

    def befores(self) -> JsArray[Sequence[Any]]:
        """``[path, kind, data (Uint8Array) | null, mode | null, complete]`` each."""
        ...


# -- page tools and approvals (worker.mjs's toolcall and approval messages) ------------------


R_co = TypeVar("R_co", covariant=True)


class PendingCall(Protocol[R_co]):
    """A question put to the page: ``id`` to cancel it by, ``promise`` its answer."""

    @property
    def id(self) -> int: ...

    @property
    def promise(self) -> Awaitable[R_co]: ...


class PageToolAnswer(Protocol):
    """A page tool's answer: ``images`` is JSON text ``[{mediaType, data}]``."""

    @property
    def ok(self) -> bool: ...

    @property
    def output(self) -> str: ...

    @property
    def images(self) -> str: ...


class ApprovalAnswer(Protocol):
    """The page's ``onApproval`` answer: "once", "always" or "deny", and a message."""

    @property
    def decision(self) -> str: ...

    @property
    def message(self) -> str | None: ...


# -- the sandbox's client (embed/worker/sandbox-client.mjs) ---------------------------------


class JsSandboxClient(Protocol):
    """The harness worker's end of the sandbox (``createSandboxClient``), which
    :class:`harness.runtime.pyodide.SandboxShell` runs commands through."""

    @property
    def generation(self) -> int: ...

    def watchReady(self, fn: Callable[[int], None]) -> None: ...

    def ready(self) -> Awaitable[Any]:
        """The generation of a ready sandbox, or ``{error}``."""
        ...

    def run(self, command: str, limits: Any, sync: Any, packed: bytes, basis: int,
            preload: bool, gate: Any) -> Awaitable[Any]:
        """``limits`` and ``sync`` (``{full, dirs, removed, files, sizes}``) are plain JS
        objects, ``packed`` the files' bytes; resolves with ``{stdout, stderr, exitCode,
        timedOut, changes: {dirs, removed, skipped, paths, datas}}``, ``{killed, why}``,
        ``{error}`` or ``{stale}``."""
        ...

    def cancel(self) -> None: ...

    def report(self, code: str, message: str) -> None: ...

    def recycle(self) -> bool: ...


# -- the host ------------------------------------------------------------------------------


class WorkerHost(Protocol):
    """The JS object the worker hands to Python (``@typedef WorkerHost`` in
    worker-boot.mjs): every member Python uses, by its JS name."""

    @property
    def http(self) -> JsHttp: ...

    @property
    def journal(self) -> JsJournalFeed: ...

    def callPageTool(self, name: str,
                     input_json: str) -> PendingCall[PageToolAnswer]: ...

    def cancelPageTool(self, id: int) -> None: ...

    def askApproval(self, request_json: str) -> PendingCall[ApprovalAnswer]: ...

    def cancelApproval(self, id: int) -> None: ...

    @property
    def shellCommands(self) -> JsArray[str]:
        """The commands the build's just-bash has (the system prompt lists them)."""
        ...

    @property
    def shellPackages(self) -> JsArray[Sequence[str]]:
        """What the bundle's package index ships: ``[name, version]`` each."""
        ...

    def sandbox(self) -> JsSandboxClient:
        """Make the sandbox's client (asked once, when the page turned the shell on)."""
        ...

    def runEnded(self) -> None:
        """A run ended: a sandbox that ran the model's code is replaced (its client's
        ``recycle``, which does nothing twice)."""
        ...

