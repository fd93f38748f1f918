"""The page's ``h.fs`` requests: parsed once (harness/workspace/fsops.py), run in the
workspace under their journal cause, and answered as one reply each.

A reply is ``bytes`` for a successful ``readFile``; otherwise JSON: ``{"ok": true,
"value": ...}`` or ``{"ok": false, "code": ..., "message": ...}`` (:func:`error_reply`,
which ``h.threads.rewind`` and ``h.revert`` answer with too).
"""

from __future__ import annotations

import json

from .errors import FsError
from .file_changes import FileChanges
from .limits import clean_text, shorten
from .workspace import fsops
from .workspace.jail import Workspace
from .workspace.journal import Journal


class FsRequests:
    def __init__(self, workspace: Workspace, journal: Journal, changes: FileChanges,
                 capture: bool) -> None:
        self.workspace = workspace
        self.journal = journal
        self.changes = changes
        self.capture = capture  # checkpoints are on: a page tool's changes keep pre-images
        self._page_calls = 0

    def answer(self, request_json: str, data: bytes | None = None,
               cause: str | None = None, of_call: bool = False) -> bytes | str:
        """Run one fs request. What it changes is in the journal as ``cause`` (the
        worker's "page:<op>:<id>"; "page:<n>" by default), and goes to the page as
        file_change events; ``of_call``: ``cause`` is a page tool's call, whose changes
        are announced when it ends.

        Never raises: whatever the page sends, it gets exactly one reply (a bug becomes
        ``EIO`` with its name, rather than a request the page waits on forever)."""
        self._page_calls += 1
        cause = cause or f"page:{self._page_calls}"
        try:
            return self._fs(request_json, data, cause, of_call)
        finally:
            if not of_call:
                self.changes.page(cause)

    def _fs(self, request_json: str, data: bytes | None, cause: str,
            of_call: bool = False) -> bytes | str:
        try:
            req = fsops.parse_request(request_json)
            with self.journal.cause(cause, capture=of_call and self.capture):
                value = fsops.dispatch(self.workspace, req, data)
            if isinstance(value, bytes):
                return value
            return json.dumps({"ok": True, "value": value})
        except FsError as exc:
            return error_reply(exc.code, str(exc))
        except Exception as exc:
            return error_reply("EIO", f"EIO: internal error in h.fs ({type(exc).__name__}: "
                               f"{shorten(clean_text(str(exc)), 300)})")


def error_reply(code: str, message: str) -> str:
    return json.dumps({"ok": False, "code": code, "message": clean_text(message)})
