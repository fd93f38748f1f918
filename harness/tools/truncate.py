"""Head truncation shared by the tools, so no tool result floods the model's context.

A tool's text output is cut to at most :data:`MAX_LINES` lines or :data:`MAX_BYTES`
bytes of UTF-8, whichever comes first. Only whole lines are kept, so a caller can tell
the model exactly where to continue; the one exception is a first line that alone is
over the byte limit, of which the start is kept (cut on a character boundary) and
:attr:`Truncation.partial_line` is set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MAX_LINES = 2000
MAX_BYTES = 50 * 1024
MAX_LINE_CHARS = 500
"""Cap for one line of a search result (grep): long minified lines say little."""
LINE_CUT_MARK = " ... [line truncated]"


@dataclass(frozen=True)
class Truncation:
    """The kept text and what was left out."""

    text: str
    truncated: bool
    truncated_by: Literal["lines", "bytes"] | None
    total_lines: int
    total_bytes: int
    shown_lines: int
    """Whole lines kept (0 when only the start of a long first line is kept)."""
    shown_bytes: int
    partial_line: bool = False
    """The first line alone is over ``max_bytes``; ``text`` is its start."""


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only; a final newline ends the last line rather than adding one.

    (``str.splitlines`` also splits on form feeds, ``\\x1c`` and the like, which would
    put line numbers out of step with editors and with grep.)
    """
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def cut_utf8(text: str, max_bytes: int) -> str:
    """The longest start of ``text`` that fits ``max_bytes`` without splitting a character."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    # Only the last, incomplete sequence can fail to decode; "ignore" drops just that.
    return data[:max_bytes].decode("utf-8", "ignore")


def truncate_head(text: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> Truncation:
    """Keep the head of ``text`` (see :func:`truncate_lines`)."""
    total_bytes = utf8_size(text)
    lines = split_lines(text)
    if len(lines) <= max_lines and total_bytes <= max_bytes:
        return Truncation(text, False, None, len(lines), total_bytes, len(lines), total_bytes)
    return truncate_lines(lines, max_lines, max_bytes)


def truncate_lines(
    lines: list[str], max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES
) -> Truncation:
    """Keep the first lines, joined by ``\\n``, within ``max_lines`` and ``max_bytes``."""
    kept: list[str] = []
    used = 0
    by: Literal["lines", "bytes"] | None = None
    for line in lines:
        if len(kept) == max_lines:
            by = "lines"
            break
        size = utf8_size(line) + (1 if kept else 0)
        if used + size > max_bytes:
            by = "bytes"
            break
        kept.append(line)
        used += size
    total_bytes = sum(utf8_size(line) for line in lines) + max(len(lines) - 1, 0)
    if by is None:
        return Truncation("\n".join(kept), False, None, len(lines), total_bytes, len(kept), used)
    if not kept and by == "bytes":
        head = cut_utf8(lines[0], max_bytes)
        return Truncation(
            head, True, "bytes", len(lines), total_bytes, 0, utf8_size(head), partial_line=True
        )
    return Truncation("\n".join(kept), True, by, len(lines), total_bytes, len(kept), used)


def truncate_line(line: str, max_chars: int = MAX_LINE_CHARS) -> tuple[str, bool]:
    """Cut one line to ``max_chars`` characters; the flag says whether it was cut."""
    if len(line) <= max_chars:
        return line, False
    return line[:max_chars] + LINE_CUT_MARK, True


def format_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / (1024 * 1024):.1f} MB"
