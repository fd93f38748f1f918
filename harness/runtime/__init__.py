"""The runtime seam: everything that differs between Pyodide-in-a-worker and CPython.

The core never imports ``js`` or ``pyodide``. It is handed a :class:`Runtime`;
:mod:`harness.runtime.pyodide` is the in-worker implementation (the only module that
touches JS objects) and :mod:`harness.runtime.native` the CPython one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..transport import Transport


@dataclass(frozen=True)
class ShellResult:
    """One command line's outcome, as the shell tool reads it."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False


class ShellRunner(Protocol):
    """Runs one command line in the shell (just-bash in the sandbox: shell/sandbox.mjs).

    Contract: never raises for a failing command (that is a non-zero exit code); raises
    ``asyncio.CancelledError`` when the run is cancelled, after aborting the command.
    """

    @property
    def commands(self) -> list[str]: ...

    async def run(self, command: str) -> ShellResult: ...


class PageToolCaller(Protocol):
    """Runs a tool that the page defined (its ``run`` is JavaScript on the page).

    Contract: returns ``(output, is_error)``; a throw on the page is ``is_error``. When
    the awaiting task is cancelled (run cancelled, tool timeout), the page's ``signal``
    is aborted and ``asyncio.CancelledError`` propagates; a late answer is dropped.
    """

    async def call(self, name: str, input_json: str) -> tuple[str, bool]: ...


class Runtime(Protocol):
    def post(self, message_json: str) -> None:
        """Send one JSON message to the page (events of a run)."""

    @property
    def transport(self) -> Transport:
        """HTTP for the model providers."""

    @property
    def page_tools(self) -> PageToolCaller | None:
        """The page's tools, where there is a page (None on CPython)."""
