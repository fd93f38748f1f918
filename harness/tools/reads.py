"""Read before overwrite: ``write`` and ``edit`` change an existing file only if the
model has seen it as it is now.

What counts as seen: a successful ``read`` of the file in this thread, whole or in
part (an ``offset``/``limit`` read counts: ``edit`` still needs its exact text), or the
model's own ``write``/``edit`` of it (so a file it created, or just changed, is
known). A ``grep`` hit, an ``ls`` entry or a shell command's output do not count.
The file is compared by content (SHA-256), so any change since — by the page, the
user, a shell or ``python3`` command, another run — makes it unseen again. Kept in
memory per thread: after a reload the model reads a file again before changing it.
"""

from __future__ import annotations

import hashlib

from ..errors import ToolError

MAX_KNOWN = 10_000  # files remembered per thread; the oldest are forgotten first


class Reads:
    """What the model of one thread has seen: a file's ``/work/...`` path → the
    SHA-256 of its bytes then."""

    def __init__(self) -> None:
        self._seen: dict[str, bytes] = {}

    def saw(self, shown: str, data: bytes) -> None:
        """The model read ``shown`` (or wrote it) and it held ``data``."""
        self._seen.pop(shown, None)
        self._seen[shown] = hashlib.sha256(data).digest()
        if len(self._seen) > MAX_KNOWN:
            del self._seen[next(iter(self._seen))]

    def check(self, shown: str, data: bytes, tool: str) -> None:
        """Refuse (``ToolError``) to change the existing file ``shown``, which now holds
        ``data``, unless the model saw exactly that."""
        known = self._seen.get(shown)
        if known is None:
            raise ToolError(f"{shown} exists and you have not read it in this conversation; "
                            f"read it first (the read tool), then {tool} it. Nothing was "
                            "changed.")
        if known != hashlib.sha256(data).digest():
            raise ToolError(f"{shown} changed since you last read it (by the page, a command "
                            f"or another run); read it again, then {tool} it. Nothing was "
                            "changed.")
