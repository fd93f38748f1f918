"""The page's checkpoint requests: ``h.revert``, ``h.diff`` and ``h.checkpoints``,
parsed once (:func:`harness.workspace.checkpoints.parse_request`) and answered as one
reply each, and the file half of ``h.threads.rewind`` (:meth:`revert_runs`). What a
revert changes goes to the page as file_change events (harness/file_changes.py).

A reply is JSON: ``{"ok": true, "value": ...}`` or ``{"ok": false, "code": ...,
"message": ...}`` (harness/fs_requests.py's :func:`error_reply`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .errors import FsError
from .file_changes import FileChanges
from .fs_requests import error_reply
from .workspace.checkpoints import Checkpoints
from .workspace.checkpoints import parse_request as parse_checkpoint_request


class CheckpointRequests:
    def __init__(self, checkpoints: Checkpoints | None, changes: FileChanges,
                 busy: Callable[[], bool]) -> None:
        self.checkpoints = checkpoints  # None: the checkpoints option is off
        self.changes = changes
        self.busy = busy  # whether a run is in progress (a revert then waits for its end)

    def answer(self, request_json: str) -> str:
        """One ``h.revert`` / ``h.diff`` / ``h.checkpoints`` request (its shapes:
        :class:`~harness.workspace.checkpoints.CheckpointRequest`). JSON ``{ok, value}``
        or ``{ok: false, code, message}``; never raises."""
        try:
            request = parse_checkpoint_request(request_json, self.checkpoints is not None)
            assert self.checkpoints is not None  # else parse_request said they are off
            if request.op == "revert" and self.busy():
                raise FsError("EBUSY", "a run is in progress; revert when it has ended")
            value = self.checkpoints.answer(request)
            if request.op == "revert" and value["revertId"] is not None:
                self.changes.revert(value["revertId"])
            return json.dumps({"ok": True, "value": value})
        except FsError as exc:
            return error_reply(exc.code, str(exc))
        except Exception as exc:  # a bug: the page still gets its one reply
            return error_reply("EIO", f"EIO: {type(exc).__name__}: {exc}")

    def revert_runs(self, runs: list[str]) -> dict[str, Any]:
        """Take back the files of ``runs`` (oldest first) that a checkpoint still has."""
        if self.checkpoints is not None:
            kept = [r for r in reversed(runs) if self.checkpoints.revertable(r)]
            if kept:
                reverted = self.checkpoints.revert(kept[-1], runs=kept)
                if reverted["revertId"] is not None:
                    self.changes.revert(reverted["revertId"])
                return reverted
        return {"revertId": None, "reverted": [], "changes": []}
