"""Helpers shared by the built-in file tools."""

from __future__ import annotations

import os
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..errors import ToolError
from ..workspace import fsops
from ..workspace.jail import Resolved, Workspace
from ..workspace.paths import MOUNT
from .truncate import (
    MAX_BYTES,
    format_size,
    truncate_lines,
)

SKIPPED_DIRS = frozenset({".git", "node_modules"})
"""Directories grep and find never descend into (unless asked to search one directly)."""


class StrictParams(BaseModel):
    # Unknown fields are refused rather than ignored: a misspelt "ofset" should not
    # silently read from the start. Both camelCase and snake_case names are accepted.
    model_config = ConfigDict(extra="forbid", validate_by_name=True, validate_by_alias=True)


fs_errors = fsops.os_errors


class PathSubject:
    """For a tool whose parameters have a ``path``: its permission rules match that path,
    relative to /work after the jail resolved it ("." for /work itself)."""

    subject_kind: ClassVar[Any] = "path"

    def subject(self, params: Any, ctx: Any) -> str | None:
        return below_mount(ctx.workspace.resolve(params.path).shown)


def read_bytes(p: Resolved) -> bytes:
    with fs_errors(p.shown):
        if os.path.isdir(p.real):
            raise ToolError(f"{p.shown} is a directory; use ls to list it.")
        with open(p.real, "rb") as f:
            return f.read()


def as_text(data: bytes) -> str | None:
    """The file's text, or ``None`` for a binary (NUL bytes) or non-UTF-8 file."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_text(p: Resolved, tool: str) -> str:
    return text_of(p, read_bytes(p), tool)


def text_of(p: Resolved, data: bytes, tool: str) -> str:
    """The text of the file ``p``, which holds ``data``; a ``ToolError`` for a binary one."""
    text = as_text(data)
    if text is None:
        raise ToolError(
            f"{p.shown} is a binary file ({len(data)} bytes) or not UTF-8 text; "
            f"{tool} works on text files only."
        )
    return text


def utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolError(f"{what} has an unpaired surrogate; it cannot be saved as UTF-8.") from None


def relative(ws: Workspace, real: str) -> str:
    """The path relative to /work (``src/a.py``), as grep and find show it."""
    return below_mount(ws.shown(real))


def below_mount(shown: str) -> str:
    """``/work/src/a.py`` as ``src/a.py``; ``/work`` itself as ``.``."""
    return "." if shown == MOUNT else shown[len(MOUNT) + 1 :]


def require_dir(p: Resolved) -> None:
    with fs_errors(p.shown):
        if not os.path.isdir(p.real):
            os.stat(p.real)  # a missing path becomes ENOENT
            raise ToolError(f"{p.shown} is not a directory; use read to see a file.")


def limit_note(limit: int, what: str) -> list[str]:
    return [f"{limit} {what} limit reached. Use limit={limit * 2} for more, or refine the pattern."]


def listing(lines: list[str], notes: list[str], narrow: str) -> str:
    """Join result lines, cut at the byte limit, then append the bracketed notes."""
    cut = truncate_lines(lines, max_lines=len(lines))
    if cut.truncated:
        notes = [*notes, f"Output cut at {format_size(MAX_BYTES)}; {narrow}."]
    return cut.text + "".join(f"\n\n[{note}]" for note in notes)


# ---------------------------------------------------------------------------
# read
