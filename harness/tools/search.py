"""The tools that look across the workspace: ls, grep, find.

Listings from grep and find give paths relative to ``/work`` (``src/a.py``), which
every tool accepts as they are. ``.git`` and ``node_modules`` are skipped.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator

from pydantic import Field

from ..errors import ToolError
from ..limits import SEARCH_DEADLINE_S
from ..workspace.jail import Resolved, Workspace
from ..workspace.paths import MOUNT
from .base import Tool, ToolContext
from .common import (
    SKIPPED_DIRS,
    PathSubject,
    StrictParams,
    as_text,
    below_mount,
    fs_errors,
    limit_note,
    listing,
    read_text,
    relative,
    require_dir,
)
from .regex_guard import Bound, compile_checked
from .truncate import (
    LINE_CUT_MARK,
    MAX_LINE_CHARS,
    split_lines,
    truncate_line,
)


class LsParams(StrictParams):
    path: str = Field(default=".", description="Directory to list (default: /work)")
    limit: int = Field(default=500, ge=1, description="Maximum number of entries (default: 500)")


class LsTool(PathSubject, Tool):
    name = "ls"
    description = (
        "List a directory's entries, sorted alphabetically, with a trailing '/' on "
        "directories; dotfiles included. Up to 500 entries unless limit is set. Use find "
        "to search by name across directories."
    )
    Params = LsParams

    async def run(self, params: LsParams, ctx: ToolContext) -> str:
        p = ctx.workspace.resolve(params.path)
        hidden = Hidden(ctx)
        hidden.refuse(p)
        require_dir(p)
        with fs_errors(p.shown), os.scandir(p.real) as it:
            names = [e.name + ("/" if e.is_dir(follow_symlinks=False) else "") for e in it
                     if not hidden(e.path)]
        if not names:
            return "\n\n".join(["(empty directory)", *(f"[{n}]" for n in hidden.notes())])
        names.sort(key=lambda n: (n.lower(), n))
        notes = hidden.notes()
        if len(names) > params.limit:
            notes.append(f"Showing {params.limit} of {len(names)} entries. Use limit={len(names)}.")
        return listing(names[: params.limit], notes, "use find with a pattern to narrow down")


# ---------------------------------------------------------------------------
# walking and globs, shared by grep and find


class Hidden:
    """The read rule's deny as ls, grep and find apply it: a denied path is skipped (a
    denied folder with all below it) and counted, and the result says so."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ws = ctx.workspace
        self.denied = ctx.hidden
        self.count = 0

    def __call__(self, real: str) -> bool:
        if self.denied is None or not self.denied(relative(self.ws, real)):
            return False
        self.count += 1
        return True

    def refuse(self, p: Resolved) -> None:
        """A path asked for that the rule denies: refused before anything is looked up,
        so the answer is the same whether it exists or not."""
        if self.denied is not None and self.denied(below_mount(p.shown)):
            raise ToolError(f"EACCES: {p.shown}: the page's permission rules deny reading it")

    def notes(self) -> list[str]:
        if not self.count:
            return []
        return [f"{self.count} path(s) were left out: the page's permission rules deny "
                "reading them."]


def _walk(top: str, hidden: Hidden | None = None) -> Iterator[tuple[str, bool]]:
    """Yield ``(real path, is_dir)`` below ``top`` in a stable order (depth first, each
    directory's subdirectories before its files, names sorted); what ``hidden`` denies
    is left out, a folder with all below it.

    Symbolic links are skipped: they could lead out of the workspace. An explicit stack
    rather than ``os.walk``, which recurses once per level before Python 3.12.
    """
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue  # unreadable, or gone meanwhile: skipped like os.walk does
        if hidden is not None:
            entries = [e for e in entries if not hidden(e.path)]
        dirs = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False)
                      and e.name not in SKIPPED_DIRS)
        files = sorted(e.name for e in entries if not e.is_dir(follow_symlinks=False)
                       and not e.is_symlink())
        for name in dirs:
            yield os.path.join(directory, name), True
        for name in files:
            yield os.path.join(directory, name), False
        pending.extend(os.path.join(directory, name) for name in reversed(dirs))


class GlobMatcher:
    """A matcher for ``/``-separated relative paths (see :func:`compile_glob`). Paths
    longer than the pattern's bound allows (:mod:`.regex_guard`) are not matched and
    counted in :attr:`skipped`."""

    def __init__(self, regex: re.Pattern[str], max_chars: int, by_name: bool) -> None:
        self.regex, self.max_chars, self.by_name = regex, max_chars, by_name
        self.skipped = 0

    def __call__(self, path: str) -> bool:
        subject = path.rsplit("/", 1)[-1] if self.by_name else path
        if len(subject) > self.max_chars:
            self.skipped += 1
            return False
        return self.regex.fullmatch(subject) is not None


def compile_glob(pattern: str) -> GlobMatcher:
    """A matcher for ``/``-separated relative paths.

    ``*`` and ``?`` stay within one path segment, ``**`` spans any depth, ``[abc]`` and
    ``{a,b}`` work as in shells. A pattern without ``/`` is matched against the base name.
    """
    pattern = pattern.removeprefix("./").removeprefix(MOUNT + "/")
    try:
        regex, bound = compile_checked(_glob_to_regex(pattern), re.DOTALL, anchored=True,
                                       what=f"glob {pattern!r} (as a regex)")
    except re.error as exc:
        raise ToolError(f"Invalid glob {pattern!r}: {exc}") from None
    return GlobMatcher(regex, bound.max_chars(anchored=True), "/" not in pattern)


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    i, depth = 0, 0
    while i < len(pattern):
        c = pattern[i]
        step = 1
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            step = 3
        elif pattern.startswith("**", i):
            out.append(".*")
            step = 2
        elif c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            step = close + 1 - i
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += step
    if depth:
        raise ToolError(f"Invalid glob {pattern!r}: a '{{' is not closed by '}}'.")
    return "".join(out)


def _matches_glob(match: GlobMatcher, ws: Workspace, top: str, real: str) -> bool:
    """Match a path relative to the search directory, or relative to /work."""
    rel = os.path.relpath(real, top).replace(os.sep, "/")
    return match(rel) or match(relative(ws, real))


# ---------------------------------------------------------------------------
# grep


class GrepParams(StrictParams):
    pattern: str = Field(description="Python regular expression (or plain text with literal=true)")
    path: str = Field(default=".", description="File or directory to search (default: /work)")
    glob: str | None = Field(
        default=None, description="Only search files matching this glob: '*.py', 'src/**/*.ts'"
    )
    ignore_case: bool = Field(
        default=False, alias="ignoreCase", description="Case-insensitive search"
    )
    literal: bool = Field(default=False, description="Treat pattern as plain text, not a regex")
    context: int = Field(default=0, ge=0, description="Lines to show before and after each match")
    limit: int = Field(default=100, ge=1, description="Maximum number of matches (default: 100)")


class GrepTool(PathSubject, Tool):
    name = "grep"
    description = (
        "Search file contents for a regex (or plain text with literal=true). Prints "
        "'path:line: text' with paths relative to /work; context lines read 'path-line- text'. "
        "Skips binary files and .git and node_modules directories. Up to 100 matches "
        "unless limit is set, lines cut at 500 characters, output cut at 50 KB."
    )
    Params = GrepParams

    async def run(self, params: GrepParams, ctx: ToolContext) -> str:
        search = _LineSearch(params)
        p = ctx.workspace.resolve(params.path)
        hidden = Hidden(ctx)
        hidden.refuse(p)
        out: list[str] = []
        found, limit_hit = 0, False
        for real, lines in _grep_files(ctx.workspace, p, params.glob, hidden):
            hits = [n for n, line in enumerate(lines) if search(line)]
            room = params.limit - found
            if len(hits) > room:  # only reported once a match beyond the limit exists
                hits, limit_hit = hits[:room], True
            if hits:
                found += len(hits)
                if out and params.context:
                    out.append("--")
                out += _grep_block(relative(ctx.workspace, real), lines, hits, params.context)
            if limit_hit or search.timed_out:
                break
        notes = search.notes() + hidden.notes()
        if not out:
            return "\n\n".join(["No matches found", *(f"[{n}]" for n in notes)])
        if limit_hit:
            notes = limit_note(params.limit, "matches") + notes
        if any(line.endswith(LINE_CUT_MARK) for line in out):
            notes.append(f"Some lines were cut at {MAX_LINE_CHARS} characters; read shows them.")
        return listing(out, notes, "narrow the path, glob or pattern")


class _LineSearch:
    """One grep pattern, bounded: each line is searched in at most the characters the
    pattern's bound allows (see :mod:`.regex_guard`), and the whole search stops at
    :data:`~harness.limits.SEARCH_DEADLINE_S` (checked between lines)."""

    def __init__(self, params: GrepParams) -> None:
        flags = re.IGNORECASE if params.ignore_case else 0
        if params.literal:
            source = re.escape(params.pattern)
            self.regex = re.compile(source, flags)
            self.max_chars = Bound(0, max(len(params.pattern), 1)).max_chars()
        else:
            # grep only asks whether a line matches, so ".*" at either end changes
            # nothing but the cost: dropped before the bound is taken.
            source = _strip_dot_star(params.pattern)
            try:
                self.regex, bound = compile_checked(source, flags)
            except re.error as exc:
                raise ToolError(
                    f"Invalid regex {params.pattern!r}: {exc}. Fix it, or pass literal=true "
                    "to search for the text as written."
                ) from None
            self.max_chars = bound.max_chars()
        self.deadline = time.monotonic() + SEARCH_DEADLINE_S
        self.cut_lines = 0
        self.timed_out = False

    def __call__(self, line: str) -> bool:
        if self.timed_out or time.monotonic() > self.deadline:
            self.timed_out = True
            return False
        if len(line) > self.max_chars:
            self.cut_lines += 1
            line = line[: self.max_chars]
        return self.regex.search(line) is not None

    def notes(self) -> list[str]:
        notes = []
        if self.cut_lines:
            notes.append(f"{self.cut_lines} lines longer than {self.max_chars:,} characters "
                         "were searched only that far (the bound for this pattern); a "
                         "simpler pattern or literal=true searches further.")
        if self.timed_out:
            notes.append(f"The search stopped after {SEARCH_DEADLINE_S:g} s; results are "
                         "partial. Narrow the path or glob.")
        return notes


def _strip_dot_star(pattern: str) -> str:
    """``pattern`` without a leading ``^.*``/``.*`` or a trailing ``.*``/``.*$`` (lazy
    forms too), which cannot change whether a line (no newline in it) matches."""
    for head in ("^.*?", "^.*", ".*?", ".*"):
        if pattern.startswith(head) and not pattern[len(head):].startswith(("+", "*", "{")):
            pattern = pattern[len(head):]
            break
    for tail in (".*?$", ".*$", ".*?", ".*"):
        if pattern.endswith(tail):
            before = pattern[: -len(tail)]
            escapes = len(before) - len(before.rstrip("\\"))
            if escapes % 2 == 0 and not before.endswith("["):
                pattern = before
            break
    return pattern


def _grep_files(ws: Workspace, p: Resolved, glob: str | None,
                hidden: Hidden) -> Iterator[tuple[str, list[str]]]:
    """Yield ``(real path, lines)`` for each text file to search."""
    with fs_errors(p.shown):
        is_dir = os.path.isdir(p.real)
        if not is_dir:
            os.stat(p.real)
    if not is_dir:
        text = read_text(p, "grep")
        yield p.real, [line.rstrip("\r") for line in split_lines(text)]
        return
    match = compile_glob(glob) if glob else None
    for real, entry_is_dir in _walk(p.real, hidden):
        if entry_is_dir or (match and not _matches_glob(match, ws, p.real, real)):
            continue
        try:
            with open(real, "rb") as f:
                content = as_text(f.read())
        except OSError:
            continue  # unreadable files are skipped like binary ones
        if content is not None:
            yield real, [line.rstrip("\r") for line in split_lines(content)]


def _grep_block(rel: str, lines: list[str], hits: list[int], context: int) -> list[str]:
    """Format one file's hits; overlapping context windows are merged, gaps marked '--'."""
    wanted: list[int] = []
    covered = 0  # each line once, however large context is: linear in the file
    for n in hits:  # ascending
        start, end = max(covered, n - context, 0), min(len(lines), n + context + 1)
        wanted.extend(range(start, end))
        covered = max(covered, end)
    hit_set = set(hits)
    block: list[str] = []
    previous = None
    for n in wanted:
        if previous is not None and n > previous + 1:
            block.append("--")
        sep = ":" if n in hit_set else "-"
        block.append(f"{rel}{sep}{n + 1}{sep} {truncate_line(lines[n])[0]}")
        previous = n
    return block


# ---------------------------------------------------------------------------
# find


class FindParams(StrictParams):
    pattern: str = Field(
        description="Glob such as '*.py' (any depth, by name) or 'src/**/*.ts' (by relative path)"
    )
    path: str = Field(default=".", description="Directory to search in (default: /work)")
    limit: int = Field(default=1000, ge=1, description="Maximum number of results (default: 1000)")


class FindTool(PathSubject, Tool):
    name = "find"
    description = (
        "Find files and directories by glob, e.g. '*.py' (by name, at any depth) or "
        "'src/**/*.ts' (by path relative to the search directory; ** is any depth). Prints "
        "sorted paths relative to /work, directories with a trailing '/'. Skips .git and "
        "node_modules. Up to 1000 results unless limit is set. Use grep to search contents."
    )
    Params = FindParams

    async def run(self, params: FindParams, ctx: ToolContext) -> str:
        p = ctx.workspace.resolve(params.path)
        hidden = Hidden(ctx)
        hidden.refuse(p)
        require_dir(p)
        match = compile_glob(params.pattern)
        found: list[str] = []
        limit_hit = timed_out = False
        deadline = time.monotonic() + SEARCH_DEADLINE_S
        for real, is_dir in _walk(p.real, hidden):
            if time.monotonic() > deadline:
                timed_out = True
                break
            if _matches_glob(match, ctx.workspace, p.real, real):
                if len(found) == params.limit:
                    limit_hit = True
                    break
                found.append(relative(ctx.workspace, real) + ("/" if is_dir else ""))
        notes = limit_note(params.limit, "results") if limit_hit else []
        notes += hidden.notes()
        if match.skipped:
            notes.append(f"Paths longer than {match.max_chars:,} characters were not matched "
                         "(the bound for this pattern); use fewer wildcards to match them.")
        if timed_out:
            notes.append(f"The search stopped after {SEARCH_DEADLINE_S:g} s; results are "
                         "partial. Search a smaller directory.")
        if not found:
            head = f"No files found matching {params.pattern!r} in {p.shown}"
            return "\n\n".join([head, *(f"[{n}]" for n in notes)])
        return listing(sorted(found), notes, "refine the pattern or search a smaller directory")
