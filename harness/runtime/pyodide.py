"""The in-worker runtime: the only module that handles JS objects.

``embed/worker.mjs`` imports this module after loading the wheels and calls
:func:`start`; from then on it calls the returned :class:`WorkerBridge` for every page
message. Arguments arrive as JS values converted by Pyodide: strings, ``None`` and, for
bytes, a ``JsProxy`` of a ``Uint8Array``.
"""

from __future__ import annotations

from typing import Any

from ..session import Session

WORKSPACE_ROOT = "/work"


class JsPostRuntime:
    """Posts JSON text through a JS function given by the worker bootstrap."""

    def __init__(self, post: Any) -> None:
        self._post = post

    def post(self, message_json: str) -> None:
        self._post(message_json)


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


def start(config_json: str, post: Any) -> WorkerBridge:
    """Create the session for this worker (raises ``UsageError`` on bad options)."""
    return WorkerBridge(Session.create(config_json, WORKSPACE_ROOT, JsPostRuntime(post)))
