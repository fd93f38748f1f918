"""Errors, split by who must see them.

- :class:`FsError` goes to the page (``h.fs``) and to tools: a POSIX code and a message.
- :class:`ToolError` becomes an error *tool result* the model reads and can act on.
- :class:`UsageError` is for the developer embedding the harness: bad options, bad
  messages. Its message names the fix.

A model that cannot answer is not an exception: its stream ends with a ``Failed`` event
(``models/base.py``: an adapter never raises once called) and the run with an ``error``
event.
"""

from __future__ import annotations

import errno as _errno


class HarnessError(Exception):
    """Base class of every error the harness raises on purpose."""


class FsError(HarnessError):
    """A filesystem failure with a POSIX error code (``ENOENT``, ``EACCES``, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    @classmethod
    def from_os_error(cls, exc: OSError, shown_path: str) -> FsError:
        """Translate an ``OSError`` into an ``FsError`` naming the workspace path.

        The message never contains the real host path, only the path the caller gave.
        """
        code = _errno.errorcode.get(exc.errno or 0, "EIO")
        reason = exc.strerror or "I/O error"
        return cls(code, f"{reason.lower()}, '{shown_path}'")


class ToolError(HarnessError):
    """A tool failed in a way the model should see and can fix (bad path, no match)."""


class UsageError(HarnessError):
    """The embedding developer passed something invalid; the message names the fix."""
