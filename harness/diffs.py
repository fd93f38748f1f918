"""Unified diffs that a user approves from or undoes by: the approval panel's (``write``,
``edit``) and the checkpoints' (``h.diff``, "Undo this run").

Two things make a diff text safe to show as it is:

- **Names are quoted** when they hold anything that would not show as itself: a newline
  (which could forge a ``+++``/``@@`` line of its own), a carriage return, any other
  control, bidi or zero-width character, a non-ASCII space, a quote or a backslash. The
  quoted form is git's: ``"a\\nb.txt"``, with C escapes (``\\u202e`` for the rest).
  Content lines need no quoting: each starts with its ``+``/``-``/space mark.
- **Removals are never dropped**: where aligning two long texts would be too slow
  (difflib is quadratic), the changed middle is shown unaligned, every old line as
  ``-`` and every new one as ``+``, never the new text alone as if the file were new.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence

from .limits import MAX_DIFF_WORK

ABSENT = "/dev/null"
"""The name of the side of a diff where the file does not exist."""

# What needs the quoted form: controls (Cc), format characters (Cf: bidi, zero width,
# U+FEFF...), line/paragraph separators, spaces other than U+0020, the blank Hangul
# fillers, lone surrogates, and the quote and backslash of the quoted form itself. The
# same set as the widget's (embed/widget/widget-dom.mjs, INVISIBLE).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
    "\u2028\u2029\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0"
    "\ud800-\udfff\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\"\\\\]"
)
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x07": "\\a", "\x08": "\\b",
          "\x0b": "\\v", "\x0c": "\\f", '"': '\\"', "\\": "\\\\"}


def quote_name(name: str) -> str:
    """``name`` as a diff header (or any line the user reads it in) shows it: as it is
    when every character shows as itself and it neither starts nor ends with a space;
    else in double quotes with C escapes, git's form (``"a\\nb.txt"``)."""
    if not _UNSAFE.search(name) and name == name.strip(" "):
        return name
    return '"' + _UNSAFE.sub(lambda m: _escape(m.group()), name) + '"'


def _escape(ch: str) -> str:
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"



def common_ends(old: Sequence[str], new: Sequence[str]) -> tuple[int, int]:
    """How many lines ``old`` and ``new`` share at their start, and then at their end."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail

def unified(old: Sequence[str], new: Sequence[str], before: str | None, after: str | None,
            context: int = 3) -> Iterator[str]:
    """The lines of the unified diff from ``old`` to ``new`` (lines without their ends):
    ``--- before`` / ``+++ after`` with the names quoted (None: the file is absent, shown
    as /dev/null), then the hunks. Aligned by difflib when that is cheap enough
    (:data:`~harness.limits.MAX_DIFF_WORK`), else one unaligned hunk over the changed
    middle; either way every removed and every added line is in it."""
    head_a = ABSENT if before is None else quote_name(before)
    head_b = ABSENT if after is None else quote_name(after)
    if len(old) * len(new) <= MAX_DIFF_WORK:
        yield from difflib.unified_diff(old, new, head_a, head_b, n=context, lineterm="")
        return
    head, tail = common_ends(old, new)
    if head == len(old) == len(new):
        return  # the same lines: no diff, as difflib
    before_ctx = min(context, head)
    after_ctx = min(context, tail)
    a0, a1 = head - before_ctx, len(old) - tail + after_ctx
    b0, b1 = head - before_ctx, len(new) - tail + after_ctx
    if (a1 - a0) * (b1 - b0) <= MAX_DIFF_WORK:  # the changed middle aligns cheaply
        hunks = difflib.unified_diff(old[a0:a1], new[b0:b1], head_a, head_b, n=context,
                                     lineterm="")
        for line in hunks:  # the middle's line numbers, moved to the file's
            yield _HUNK.sub(lambda m: _moved(m, a0), line) if line.startswith("@@") else line
        return
    yield f"--- {head_a}"
    yield f"+++ {head_b}"
    yield f"@@ -{_range(a0, a1)} +{_range(b0, b1)} @@"
    yield from (" " + line for line in old[a0:head])
    yield from ("-" + line for line in old[head : len(old) - tail])
    yield from ("+" + line for line in new[head : len(new) - tail])
    yield from (" " + line for line in old[len(old) - tail : a1])


_HUNK = re.compile(r"([-+])(\d+)(,\d+)?")


def _moved(match: re.Match[str], offset: int) -> str:
    sign, start, length = match.group(1), int(match.group(2)), match.group(3) or ""
    # an empty range names the line before it: line 0 moves like any other
    return f"{sign}{start + offset}{length}"


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (difflib's ``_format_range_unified``)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def bounded(lines: Iterator[str], max_chars: int) -> str:
    """The lines of one file's diff (:func:`unified`) joined, within about ``max_chars``.
    A cut diff ends with a line saying how many lines it removes and adds in all and
    how many of those are not shown, so nothing past the cut is silent (a line too long
    to fit is shown in part, marked)."""
    shown: list[str] = []
    room = max_chars
    removed = added = hidden_removed = hidden_added = 0
    cut = False
    for i, line in enumerate(lines):
        is_del = i >= 2 and line.startswith("-")  # the first two: the --- / +++ names
        is_add = i >= 2 and line.startswith("+")
        removed += is_del
        added += is_add
        if not cut and len(line) < room:
            shown.append(line)
            room -= len(line) + 1
            continue
        if not cut and room > 200:  # the first line that does not fit: its start
            shown.append(f"{line[:room - 60]} [... this line is cut: "
                         f"{len(line) - (room - 60):,} more characters]")
        cut = True
        hidden_removed += is_del
        hidden_added += is_add
    if cut:
        shown.append(f"... (the diff is cut at {max_chars:,} characters: in all it removes "
                     f"{removed:,} lines and adds {added:,}; {hidden_removed:,} removed and "
                     f"{hidden_added:,} added lines are not shown in full)")
    return "\n".join(shown)
