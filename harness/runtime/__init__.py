"""The runtime seam: everything that differs between Pyodide-in-a-worker and CPython.

The core never imports ``js`` or ``pyodide``. It is handed a :class:`Runtime`;
:mod:`harness.runtime.pyodide` is the in-worker implementation (the only module that
touches JS objects) and :mod:`harness.runtime.native` the CPython one.
"""

from __future__ import annotations

from typing import Protocol

from ..transport import Transport


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
