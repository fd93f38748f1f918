"""File changes to the page: what the journal recorded under one cause, told as
``file_change`` events (:func:`harness.events.file_changes`), numbered in one sequence
for the whole session (their ``seq``).

Three causes reach the page this way: a tool call (when it is over, before its
``tool_end``: harness/call_hooks.py), a page call (``h.fs``, or a plain write the
worker answered itself) and a revert (``h.revert``, ``h.threads.rewind``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from . import events as ev
from .errors import FsError
from .workspace.jail import Workspace
from .workspace.journal import Journal


class FileChanges:
    def __init__(self, journal: Journal, workspace: Workspace,
                 post: Callable[[str], None]) -> None:
        self.journal = journal
        self.workspace = workspace
        self.post = post  # the runtime's: one wire message to the page
        self._file_changes = 0  # file_change events sent (their seq)
        # told (path, seq) of each file_change sent (the preview reloads on them)
        self.watchers: list[Callable[[str, int], None]] = []

    def page(self, cause: str) -> None:
        """Tell the page what one page call changed (file_change events, runId null)."""
        self.call(None, cause, None, None)

    def call(self, run_id: str | None, cause: str, call_id: str | None,
             tool: str | None) -> None:
        """Tell the page what ``cause`` changed: tool call ``call_id`` of run ``run_id``
        (``tool`` its name), or a page call (``run_id`` and ``call_id`` None)."""
        changes = self.journal.changes(cause)
        if not changes:
            return
        self._send(ev.file_changes(changes, run_id, call_id, tool, self._stat,
                                   self._file_changes))

    def revert(self, revert_id: str) -> None:
        """A revert's changes go to the page as file_change events of their own cause
        (``callId`` the revert's id, ``tool`` "revert", ``runId`` null)."""
        changes = self.journal.changes(revert_id)
        self._send(ev.file_changes(changes, None, revert_id, "revert", self._stat,
                                   self._file_changes))

    def _send(self, events: list[ev.FileChange]) -> None:
        for event in events:
            self.post(event.model_dump_json(by_alias=True))
            self._file_changes += 1
            for watcher in self.watchers:
                watcher(event.path, event.seq)

    def _stat(self, path: str) -> tuple[bool, int] | None:
        try:
            st = os.stat(self.workspace.resolve(path).real, follow_symlinks=False)
        except (FsError, OSError):
            return None
        return stat.S_ISDIR(st.st_mode), st.st_size
