"""The runtime seam: everything that differs between Pyodide-in-a-worker and CPython.

The core never imports ``js`` or ``pyodide``. It is handed a :class:`Runtime`;
:mod:`harness.runtime.pyodide` is the in-worker implementation (the only module that
touches JS objects) and :mod:`harness.runtime.native` the CPython one.
"""

from __future__ import annotations

from typing import Protocol


class Runtime(Protocol):
    def post(self, message_json: str) -> None:
        """Send one JSON message to the page (events of a run)."""
