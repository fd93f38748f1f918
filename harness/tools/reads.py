"""Read before overwrite: ``write`` and ``edit`` change an existing file only if the
model has seen it as it is now.

What counts as seen: a ``read`` of the file in this thread that returned its content,
whole or in part (an ``offset``/``limit`` read counts: ``edit`` still needs its exact
text; an image counts when the image itself was shown), or the model's own
``write``/``edit`` of it (so a file it created, or just changed, is known). A read that
failed (an offset past the end, a directory, a binary file, a denied or refused path)
does not count, nor do a ``grep`` hit, an ``ls`` entry or a shell command's output.
The file is compared by content (SHA-256), so any change since — by the page, the
user, a shell or ``python3`` command, another run — makes it unseen again.

Each sighting is kept with the run it happened in, so that ``h.threads.rewind``, which
cuts those runs out of the conversation, forgets them too (:meth:`Reads.forget`): what
counts is the newest sighting still in the history. Kept in memory per thread: after a
reload the model reads a file again before changing it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from ..errors import ToolError

MAX_KNOWN = 10_000  # files remembered per thread; the oldest are forgotten first
MAX_SIGHTINGS = 8  # runs remembered per file; forgetting one only asks for a read again


class Reads:
    """What the model of one thread has seen: a file's ``/work/...`` path → the runs in
    which it saw it and the SHA-256 of its bytes then (the newest last)."""

    def __init__(self) -> None:
        self._seen: dict[str, list[tuple[str | None, bytes]]] = {}
        self.run: str | None = None  # the run now going (the session sets it)

    def saw(self, shown: str, data: bytes) -> None:
        """The model read ``shown`` (or wrote it) and it held ``data``."""
        sightings = [s for s in self._seen.pop(shown, []) if s[0] != self.run]
        sightings.append((self.run, hashlib.sha256(data).digest()))
        self._seen[shown] = sightings[-MAX_SIGHTINGS:]
        if len(self._seen) > MAX_KNOWN:
            del self._seen[next(iter(self._seen))]

    def forget(self, runs: Iterable[str]) -> None:
        """These runs are no longer in the conversation (rewound): what the model saw in
        them no longer counts."""
        gone = set(runs)
        for shown in list(self._seen):
            kept = [s for s in self._seen[shown] if s[0] not in gone]
            if kept:
                self._seen[shown] = kept
            else:
                del self._seen[shown]

    def check(self, shown: str, data: bytes, tool: str) -> None:
        """Refuse (``ToolError``) to change the existing file ``shown``, which now holds
        ``data``, unless the model's newest sighting of it is exactly that."""
        sightings = self._seen.get(shown)
        if not sightings:
            raise ToolError(f"{shown} exists and you have not read it in this conversation; "
                            f"read it first (the read tool), then {tool} it. Nothing was "
                            "changed.")
        if sightings[-1][1] != hashlib.sha256(data).digest():
            raise ToolError(f"{shown} changed since you last read it (by the page, a command "
                            f"or another run); read it again, then {tool} it. Nothing was "
                            "changed.")
