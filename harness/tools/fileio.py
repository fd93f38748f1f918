"""The tools that work on one file: read, write, edit.

Messages about a file name it as ``/work/...``. Outputs are cut with :mod:`.truncate`
and say how to get the rest.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import os
import re
from dataclasses import dataclass

from pydantic import Field

from .. import diffs, images
from ..errors import ToolError
from ..limits import MAX_DIFF_WORK
from ..workspace import fsops
from ..workspace.jail import Resolved
from .base import Tool, ToolContext, ToolReply
from .common import (
    PathSubject,
    StrictParams,
    as_text,
    below_mount,
    fs_errors,
    read_bytes,
    text_of,
    utf8,
)
from .truncate import (
    MAX_BYTES,
    MAX_LINES,
    Truncation,
    format_size,
    split_lines,
    truncate_line,
    truncate_lines,
    utf8_size,
)


class ReadParams(StrictParams):
    path: str = Field(description="File to read: relative to /work or an absolute /work/... path")
    offset: int | None = Field(
        default=None, ge=1, description="Line number to start reading from (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="Maximum number of lines to read")


class ReadTool(PathSubject, Tool):
    name = "read"
    description = (
        "Read a UTF-8 text file, or look at an image (PNG, JPEG, GIF, WebP). Output is cut to "
        f"{MAX_LINES} lines or {MAX_BYTES // 1024} KB, whichever comes first; the result "
        "then ends with the offset to continue from. Use offset/limit for large files. "
        "Use ls for directories and grep to find text without reading whole files."
    )
    Params = ReadParams

    async def run(self, params: ReadParams, ctx: ToolContext) -> str | ToolReply:
        p = ctx.workspace.resolve(params.path)
        data = read_bytes(p)
        kind = images.sniff(data)
        if kind is not None:
            reply = _read_image(p.shown, data, kind, ctx)
            if ctx.reads is not None and isinstance(reply, ToolReply):
                ctx.reads.saw(p.shown, data)  # the model was shown the image itself
            return reply
        lines = split_lines(text_of(p, data, "read"))
        total = len(lines)
        start = (params.offset or 1) - 1
        if start >= total and not (total == 0 and start == 0):
            raise ToolError(f"offset {params.offset} is beyond end of file ({total} lines)")
        # Only now, with its text on the way to the model, does the read count for read
        # before overwrite (a read that failed showed nothing).
        if ctx.reads is not None:
            ctx.reads.saw(p.shown, data)
        if total == 0:
            return "(empty file)"
        end = total if params.limit is None else min(total, start + params.limit)
        cut = truncate_lines(lines[start:end])
        return cut.text + _read_hint(cut, lines, start, end)


def _read_image(shown: str, data: bytes, kind: str, ctx: ToolContext) -> str | ToolReply:
    """An image file: shown to a model that takes images (up to MAX_IMAGE_BYTES),
    described to one that does not."""
    about = images.describe(shown, data, kind)
    if not ctx.vision:
        return f"{about}. This model is not given images; only this description."
    if len(data) > images.MAX_IMAGE_BYTES:
        return (f"{about}. Too large to show (more than "
                f"{images.MAX_IMAGE_BYTES // images.MIB} MiB); only this description.")
    return ToolReply(f"{about}. The image is attached.", (images.image(shown, data, kind),))


def _read_hint(cut: Truncation, lines: list[str], start: int, end: int) -> str:
    total = len(lines)
    if cut.partial_line:
        size = format_size(utf8_size(lines[start]))
        more = f", or offset={start + 2} to read on after it" if start + 1 < total else ""
        return (
            f"\n\n[Line {start + 1} is {size}, over the {format_size(MAX_BYTES)} limit: only "
            f"its start is shown. Search inside it with grep{more}.]"
        )
    last = start + cut.shown_lines if cut.truncated else end
    if last >= total:
        return ""
    why = f" ({format_size(MAX_BYTES)} limit)" if cut.truncated_by == "bytes" else ""
    return (
        f"\n\n[Showing lines {start + 1}-{last} of {total}{why}. "
        f"Use offset={last + 1} to continue.]"
    )


# ---------------------------------------------------------------------------
# write


class WriteParams(StrictParams):
    path: str = Field(description="File to write: relative to /work or an absolute /work/... path")
    content: str = Field(description="The complete new content of the file")


class WriteTool(PathSubject, Tool):
    name = "write"
    description = (
        "Write a file, creating it and any missing parent directories, or replacing it "
        "entirely if it exists. Use edit to change part of an existing file."
    )
    Params = WriteParams

    async def run(self, params: WriteParams, ctx: ToolContext) -> str:
        p = ctx.workspace.resolve(params.path)
        if os.path.isdir(p.real):
            raise ToolError(f"{p.shown} is a directory; give the path of a file to write.")
        data = utf8(params.content, "content")
        if ctx.reads is not None and os.path.isfile(p.real):
            ctx.reads.check(p.shown, read_bytes(p), "write")
        parent = os.path.dirname(p.real)
        if not os.path.lexists(parent):
            with fs_errors(p.shown, p.real):
                fsops.makedirs(parent)
        fsops.write_file(ctx.workspace, p.shown, data)
        if ctx.reads is not None:
            ctx.reads.saw(p.shown, data)
        return f"Wrote {len(data)} bytes to {p.shown}"

    def preview(self, params: WriteParams, ctx: ToolContext) -> str | None:
        p = ctx.workspace.resolve(params.path)
        if read_denied(p, ctx):  # the page is shown the new text, never the denied old one
            return (f"(what {p.shown} holds now is not shown: the page's permission rules "
                    "deny reading it)\n" + approval_diff(p.shown, None, params.content))
        before = read_bytes(p) if os.path.isfile(p.real) else None
        return approval_diff(p.shown, before, params.content)

    def basis(self, params: WriteParams, ctx: ToolContext) -> str | None:
        return target_state(ctx.workspace.resolve(params.path))


# ---------------------------------------------------------------------------
# edit


class Replacement(StrictParams):
    old_text: str = Field(
        alias="oldText",
        description="Exact text to replace, including whitespace; must occur exactly once",
    )
    new_text: str = Field(alias="newText", description="Text to put in its place")


class EditParams(StrictParams):
    path: str = Field(description="File to edit: relative to /work or an absolute /work/... path")
    edits: list[Replacement] = Field(
        min_length=1,
        description="Replacements, each matched against the original file; none may overlap",
    )


class EditTool(PathSubject, Tool):
    name = "edit"
    description = (
        "Edit a file by exact text replacement. Each edits[i].oldText must occur exactly "
        "once in the original file (whitespace included) and edits must not overlap; all "
        "are applied together, or none if any fails. Read the file first; use write to "
        "replace a whole file."
    )
    Params = EditParams

    async def run(self, params: EditParams, ctx: ToolContext) -> str:
        p = ctx.workspace.resolve(params.path)
        refuse_denied(p, ctx)
        data = read_bytes(p)
        if ctx.reads is not None:
            ctx.reads.check(p.shown, data, "edit")
        before = text_of(p, data, "edit")
        spans = _spans(before, params, p.shown)
        after = _apply(before, spans)
        written = utf8(after, "newText")
        fsops.write_file(ctx.workspace, p.shown, written)
        if ctx.reads is not None:
            ctx.reads.saw(p.shown, written)
        plural = "s" if len(spans) > 1 else ""
        return f"Applied {len(spans)} edit{plural} to {p.shown}\n{_diff(before, after)}"

    def preview(self, params: EditParams, ctx: ToolContext) -> str | None:
        p = ctx.workspace.resolve(params.path)
        refuse_denied(p, ctx)
        data = read_bytes(p)
        before = text_of(p, data, "edit")
        return approval_diff(p.shown, data, _apply(before, _spans(before, params, p.shown)))

    def basis(self, params: EditParams, ctx: ToolContext) -> str | None:
        return target_state(ctx.workspace.resolve(params.path))


def read_denied(p: Resolved, ctx: ToolContext) -> bool:
    """Whether the read rule denies ``p`` (an edit reads what it changes)."""
    return ctx.hidden is not None and ctx.hidden(below_mount(p.shown))


def refuse_denied(p: Resolved, ctx: ToolContext) -> None:
    """An edit of a path the read rule denies: refused whether or not it exists, before
    anything of it is read (its text, whether an old text is in it)."""
    if read_denied(p, ctx):
        raise ToolError(f"EACCES: {p.shown}: the page's permission rules deny reading it, "
                        "and edit must read what it changes; use write to replace it whole "
                        "if the rules allow that.")


def _spans(before: str, params: EditParams, shown: str) -> list[_Span]:
    """Where each edit goes in ``before`` (raises ``ToolError`` for one that cannot be
    applied, or when together they change nothing)."""
    spans = sorted(_locate(before, e, i, shown) for i, e in enumerate(params.edits))
    for a, b in itertools.pairwise(spans):
        if b.start < a.end:
            raise ToolError(
                f"edits[{a.index}] and edits[{b.index}] overlap in {shown}; "
                "merge them into one edit."
            )
    if _apply(before, spans) == before:
        raise ToolError(f"No changes: every newText equals its oldText in {shown}.")
    return spans


MAX_APPROVAL_DIFF = 20_000  # characters of the diff an approval request shows


def approval_diff(shown: str, before: bytes | None, after: str) -> str:
    """The unified diff of a file from ``before`` (None: it does not exist) to ``after``,
    as the page shows it when it asks its user: against the file as it is, its name
    quoted (harness/diffs.py), every removed line in it; cut to about
    :data:`MAX_APPROVAL_DIFF` characters with a line counting what is not shown."""
    new = split_lines(after)
    if before is not None and as_text(before) is None:
        head = (f"Binary file {diffs.quote_name(shown)} ({len(before):,} bytes, not shown) "
                "is replaced by this text:")
        hunks = itertools.islice(diffs.unified([], new, None, shown), 2, None)  # no names
        return diffs.bounded(itertools.chain([head, ""], hunks), MAX_APPROVAL_DIFF)
    old = [] if before is None else split_lines(before.decode("utf-8"))
    return diffs.bounded(diffs.unified(old, new, None if before is None else shown, shown),
                         MAX_APPROVAL_DIFF)


def target_state(p: Resolved) -> str:
    """What an approval of a change to ``p`` is bound to (harness/policy/approvals.py): where
    the path leads and what is there now — its bytes' SHA-256, "absent", "directory" —
    so any change to it (a write, a delete, a create, a rename into it, a symlink
    pointed elsewhere) gives another value."""
    where = os.path.realpath(p.real)
    try:
        if os.path.isdir(where):
            return f"{where}\0directory"
        with open(where, "rb") as f:
            digest = hashlib.sha256()
            while chunk := f.read(1 << 20):
                digest.update(chunk)
        return f"{where}\0sha256:{digest.hexdigest()}"
    except FileNotFoundError:
        return f"{where}\0absent"
    except OSError as exc:
        return f"{where}\0error {exc.errno}"


@dataclass(frozen=True, order=True)
class _Span:
    start: int
    end: int
    index: int
    new_text: str


def _locate(text: str, edit: Replacement, index: int, shown: str) -> _Span:
    old, new = edit.old_text, edit.new_text
    where = f"edits[{index}].oldText"
    if old == "":
        raise ToolError(
            f"{where} is empty; give the exact text to replace (write replaces a whole file)."
        )
    if old not in text and "\r\n" in text and "\n" in old:
        # The file has Windows line ends and the model wrote plain "\n": match those.
        old, new = _crlf(old), _crlf(new)
    found = _occurrences(text, old)
    if found == 0:
        raise ToolError(
            f"Could not find {where} in {shown}. It must match exactly, including whitespace "
            "and line breaks; read the file again and copy the text."
        )
    if found > 1:
        times = f"{found} times" if found <= _COUNT_CAP else f"more than {_COUNT_CAP} times"
        raise ToolError(
            f"{where} matches {times} in {shown}; add surrounding lines to make it unique."
        )
    start = text.index(old)
    return _Span(start, start + len(old), index, new)


def _crlf(text: str) -> str:
    return re.sub(r"(?<!\r)\n", "\r\n", text)


_COUNT_CAP = 100  # counting every "a" in 4 MB of "a"s, per edit, would take seconds


def _occurrences(text: str, sub: str) -> int:
    """Occurrences of ``sub``, overlapping ones included ("aa" is twice in "aaa"),
    counted up to one more than :data:`_COUNT_CAP`."""
    count, at = 0, text.find(sub)
    while at != -1 and count <= _COUNT_CAP:
        count += 1
        at = text.find(sub, at + 1)
    return count


def _apply(text: str, spans: list[_Span]) -> str:
    parts: list[str] = []
    at = 0
    for span in spans:
        parts += [text[at : span.start], span.new_text]
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


def _diff(before: str, after: str, max_lines: int = 60) -> str:
    old, new = split_lines(before), split_lines(after)
    head, tail = diffs.common_ends(old, new)
    changed_old, changed_new = len(old) - head - tail, len(new) - head - tail
    if changed_old * changed_new <= MAX_DIFF_WORK:
        diff = list(difflib.unified_diff(old, new, n=2, lineterm=""))[2:]  # no ---/+++
    else:
        half = max_lines // 2
        diff = [f"@@ -{head + 1},{changed_old} +{head + 1},{changed_new} @@ (not aligned: "
                "a large change)",
                *("-" + line for line in old[head : head + half]),
                *("+" + line for line in new[head : head + half])]
    body = [truncate_line(line)[0] for line in diff]
    if len(body) > max_lines:
        body = [*body[:max_lines], f"... ({len(body) - max_lines} more diff lines)"]
    return "\n".join(body)


# ---------------------------------------------------------------------------
# ls
