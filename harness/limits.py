"""Limits on what crosses a boundary, in one place, and the helpers that apply them.

Everything the harness receives from the page, the model or the filesystem is bounded
here before anything else touches it, so that no input can exhaust the stack, hang the
worker or produce text that cannot be sent on. docs/reliability.md lists these values.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

# --- text --------------------------------------------------------------------------

MAX_PROMPT_CHARS = 1_000_000
"""A prompt from the page (``h.prompt``); a longer one ends its run with an error."""

MAX_EVENT_TEXT_CHARS = 1_000_000
"""Any one string field of an event sent to the page; longer text is cut with a note.
(The history keeps the whole text: only what is shown is cut.)"""

# --- JSON from the model and the page ---------------------------------------------

MAX_TOOL_ARGUMENTS_CHARS = 4 * 1024 * 1024
"""Raw tool-call arguments from the model: 4 Mi characters (a big ``write`` fits)."""

MAX_JSON_DEPTH = 64
"""Nesting of objects and arrays in tool arguments, fs requests and stream events.
Checked on the text before parsing: the parsers recurse, and in Pyodide a deep
enough document overflows the C stack, which kills the interpreter."""

MAX_SCHEMA_DEPTH = 32
"""Nesting of a page tool's JSON Schema (``parameters``): jsonschema checks a schema
and validates against it recursively; 100 levels overflowed Python's stack."""

MAX_SSE_EVENT_CHARS = 16 * 1024 * 1024
"""One event of a provider's stream (a server that never ends a line must not fill
the memory); the answer then fails with ``bad_response``."""

MAX_FS_REQUEST_CHARS = 64 * 1024
"""An ``h.fs`` request's JSON (paths, flags; file bytes travel separately)."""

# --- paths -------------------------------------------------------------------------

MAX_WORKSPACE_ENTRIES = 20_000
"""Files and directories in /work. Checked where many arrive at once (a shell command's
changes, ``importZip``): past it, none of them are kept (ENOSPC). Every boot of a
persistent workspace reads its tree back, so the bound is also a bound on reopening."""

MAX_WORKSPACE_BYTES = 1024 * 1024 * 1024
"""Bytes of all the files in /work, checked at the same places."""

MAX_NAME_BYTES = 255
"""One path component, in UTF-8 bytes: Linux's NAME_MAX (``ENAMETOOLONG``)."""

MAX_PATH_BYTES = 4096
"""A whole workspace path (``/work/...``), in UTF-8 bytes: Linux's PATH_MAX."""

MAX_PATH_DEPTH = 256
"""Components below ``/work``. Linux has no such limit, but recursive code in the
runtime (Emscripten's FS, the shell's ``rm -r``) does; 256 is far beyond real trees."""

# --- regular expressions from the model (grep, find) --------------------------------

MAX_PATTERN_CHARS = 1000
"""A regex or glob from the model."""

REGEX_STEP_BUDGET = 250_000_000
"""The most steps one ``re`` call may take in the worst case, as estimated by
:mod:`harness.tools.regex_guard` (measured: at most about 1.3 ns a step on CPython, so
about 0.35 s, up to twice that in Pyodide; ``re`` cannot be interrupted, so this bounds how
long the worker can be stuck in one call)."""

MIN_USEFUL_CHARS = 80
"""A pattern whose bound leaves fewer characters than this to search is refused."""

MAX_SEARCH_LINE_CHARS = 100_000
"""grep searches at most this many characters of a line (fewer for complex patterns)."""

SEARCH_DEADLINE_S = 10.0
"""grep and find stop after this long (checked between lines and files) and say so."""

MAX_DIFF_WORK = 4_000_000
"""The edit tool's diff: difflib aligns the changed region in up to (old lines x new
lines) steps, which a large reordering reaches (8,000 interleaved lines took 4 s);
beyond this the region is shown unaligned (about 0.25 s at the limit)."""


# --- helpers -------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so that it can be encoded
    as UTF-8, serialised by pydantic and handed to JavaScript. (A Python ``str`` holds
    a valid pair as one code point, so any surrogate code point here is a lone one.)"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def clean_value(value: Any) -> Any:
    """:func:`clean_text` applied to every string (keys too) of a JSON-like value."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    return value


def cut_text(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, with a note saying how much was left out."""
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f" … [{len(text) - max_chars} more characters not shown]"


def shorten(text: str, max_chars: int = 120) -> str:
    """A long value (a path, a name) cut for an error message."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


# A string literal, or an unterminated one running to the end (possibly ending in a
# lone backslash): every attempt that starts at a quote succeeds at once, so a
# substitution with it never backtracks and stays linear in the text.
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text, without parsing it.

    Linear time: string literals are removed first (their brackets do not count), then
    the running depth of what is left is summed in C by ``accumulate``.
    """
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


class JsonLimitError(ValueError):
    """JSON text over a size or depth limit; the message says which and by how much."""


def loads_bounded(text: str, what: str, max_chars: int, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` after checking size and nesting on the text (raises
    :class:`JsonLimitError`, or ``ValueError`` for invalid JSON); strings are cleaned."""
    if len(text) > max_chars:
        raise JsonLimitError(f"{what} are {len(text):,} characters; the limit is {max_chars:,}")
    depth = json_depth(text)
    if depth > max_depth:
        raise JsonLimitError(f"{what} are nested {depth} levels deep; the limit is {max_depth}")
    return clean_value(json.loads(text))
