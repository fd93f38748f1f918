"""The permission rules: the page's ``permissions`` option, and the verdict on one call.

The option names tools; each gets an action (``"allow" | "ask" | "deny"``) or a map of
glob pattern -> action, matched against the call's *subject*: the workspace-relative
path for a path tool (after the jail: ``docs/a.md``, the root is ``.``), the command line
for the shell. A tool without an entry is allowed.

In a map the longest matching pattern wins (by its length as written), ``"*"`` is
always the weakest and matches every subject, and a tie between equally long patterns
goes to the strictest action (deny > ask > allow). A map is never collapsed to its
``"*"`` entry, and **a subject that no pattern of a map matches is asked** (fail
closed): write a deny-list with an explicit ``"*": "allow"``.

Path patterns are gitignore-like and match the whole path: ``*`` within one segment,
``**`` any number of segments (``docs/**`` is everything under ``docs``, not ``docs``
itself; ``**/*.py`` matches ``a.py`` too), ``?`` one character but ``/``, ``[abc]``,
``[a-z]``, ``[!x]`` classes, and ``\\`` makes the next character literal.

Command patterns match each simple command of the line (harness/policy/shellwords.py) after
normalisation: its words with quotes and escapes removed, joined by single spaces,
without leading assignments or ``!``. ``*`` matches any run of characters (``/`` and
spaces too), ``?`` any one character, and a trailing `` *`` also matches the bare
command (``ls *`` matches ``ls``). Redirections stay part of the text, moved to its end
in order: ``echo hi > f`` is matched as ``echo hi > f`` and ``> f rm x`` as
``rm x > f``. The line's verdict is the strictest of its commands'. A command whose first
word is an expansion (``$CMD x``, ``$(echo git) push``) is matched by ``"*"`` only; a
line that cannot be split with certainty (``case``, a function, ``((``, ``<(``,
unbalanced quotes, over the bounds) gets the ``"*"`` entry's action made at least
``ask``, and an ask of that kind is never covered by an "always".

This matching of a line's text is the rules' first pass. A line's text never says all
it runs (bash expands words as it goes), so the shell's rule is applied again to each
simple command as the sandbox's interpreter runs it, by :meth:`Rules.decide_run`
(harness/policy/enforce.py): there a deny pattern holds however the command was reached.

"Always" grants are ``(tool, pattern)`` pairs the caller keeps: an ``ask`` whose winning
pattern is granted becomes ``allow``; a winning ``deny`` is never changed by a grant.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import Literal

from ..errors import UsageError
from ..limits import shorten
from . import shellwords

Action = Literal["allow", "ask", "deny"]
SubjectKind = Literal["path", "command", "none"]  # "none": page tools etc., an action only

ACTIONS: tuple[Action, ...] = ("allow", "ask", "deny")
MAX_PATTERNS = 200
MAX_PATTERN_CHARS = 1_000
_STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
_ANY = "*"


@dataclass(frozen=True)
class Verdict:
    action: Action
    patterns: tuple[str, ...]
    """The deciding pattern(s): for ask, every asking pattern; for deny, the denying one;
    for allow, the allowing ones; () when no rule decided, or no grant may cover it."""
    rule: str | None
    """A short display form (``bash: "git push *"``); None when the tool has no rule."""


@dataclass(frozen=True)
class _Pattern:
    text: str
    action: Action
    regex: re.Pattern[str] | None  # None for "*", which matches everything

    @property
    def rank(self) -> tuple[int, int]:
        return (-1 if self.regex is None else len(self.text), _STRICTNESS[self.action])


_Entry = Action | tuple[_Pattern, ...]


class Rules:
    def __init__(self, entries: Mapping[str, _Entry], tools: Mapping[str, SubjectKind]) -> None:
        self._entries = dict(entries)
        self._kinds = dict(tools)

    @classmethod
    def parse(cls, raw: object, tools: Mapping[str, SubjectKind]) -> Rules:
        """The rules of a page's ``permissions`` option (None: no rules); a bad one is a
        :class:`UsageError` naming its key. ``tools`` is every tool and its subject."""
        if raw is None:
            return cls({}, tools)
        if not isinstance(raw, dict):
            raise UsageError(
                f"invalid option 'permissions': expected an object of tool name -> action "
                f"or pattern map, got {type(raw).__name__}"
            )
        entries: dict[str, _Entry] = {}
        for tool, value in raw.items():
            where = f"permissions.{shorten(str(tool), 80)}"
            if tool not in tools:
                raise UsageError(
                    f"invalid option '{where}': no tool is named {tool!r}; "
                    f"choose from {sorted(tools)}"
                )
            if isinstance(value, dict):
                entries[tool] = _parse_map(where, tool, tools[tool], value)
            else:
                entries[tool] = _action(where, value)
        return cls(entries, tools)

    def has_rule(self, tool: str) -> bool:
        return tool in self._entries

    def decide(
        self, tool: str, subject: str | None, granted: Set[tuple[str, str]] = frozenset()
    ) -> Verdict:
        """The verdict on one call of ``tool`` on ``subject`` (None: the tool has none)."""
        entry = self._entries.get(tool)
        if entry is None:
            return Verdict("allow", (), None)
        if isinstance(entry, str):
            if entry == "ask" and (tool, _ANY) in granted:
                return Verdict("allow", (_ANY,), f"{tool}: ask")
            return Verdict(entry, (_ANY,), f"{tool}: {entry}")
        if subject is None or self._kinds.get(tool, "none") == "none":
            return _unchecked(tool, entry, "no subject to match")
        if self._kinds[tool] == "path":
            return _combine(tool, [_winner(entry, subject, dynamic=False)], granted)
        commands = shellwords.split(subject)
        if commands is None:
            return _unchecked(tool, entry, "the line cannot be split with certainty")
        found = commands or [shellwords.Command("", dynamic=False)]
        return _combine(tool, [_winner(entry, c.text, c.dynamic) for c in found], granted)


    def decide_run(
        self, tool: str, command: str, granted: Set[tuple[str, str]] = frozenset()
    ) -> Verdict:
        """The verdict on one simple command as the shell is about to run it: its name and
        its expanded arguments joined by single spaces (no splitting, nothing dynamic
        left: the interpreter has expanded it). Redirections are not part of it: what a
        command writes is decided on the path, by the ``write`` rule."""
        entry = self._entries.get(tool)
        if entry is None or isinstance(entry, str):
            return self.decide(tool, command, granted)
        return _combine(tool, [_winner(entry, command, dynamic=False)], granted)

    def denies(self, tool: str, subject: str) -> bool:
        """Whether a rule of ``tool`` denies ``subject`` (no grant ever changes a deny)."""
        return tool in self._entries and self.decide(tool, subject).action == "deny"


def simple_commands(line: str) -> list[str] | None:
    """The normalised simple commands of a shell line, or None when it is unsplittable."""
    commands = shellwords.split(line)
    return None if commands is None else [c.text for c in commands]


# --- deciding -------------------------------------------------------------------------


def _winner(patterns: tuple[_Pattern, ...], subject: str, dynamic: bool) -> _Pattern | None:
    """The longest matching pattern (ties: the strictest), or None when none matches."""
    matching = [p for p in patterns
                if p.regex is None or (not dynamic and p.regex.fullmatch(subject))]
    return max(matching, key=lambda p: p.rank, default=None)


def _combine(tool: str, winners: list[_Pattern | None], granted: Set[tuple[str, str]]) -> Verdict:
    """The strictest verdict over the winners of a subject's commands, after the grants."""
    deny = next((w for w in winners if w is not None and w.action == "deny"), None)
    if deny is not None:
        return Verdict("deny", (deny.text,), _display(tool, [deny.text]))
    asking = [w for w in winners
              if w is None or (w.action == "ask" and (tool, w.text) not in granted)]
    if asking:
        texts = _unique(w.text for w in asking if w is not None)
        unmatched = ["(no pattern matches)"] if None in asking else []
        return Verdict("ask", texts, _display(tool, list(texts), unmatched))
    texts = _unique(w.text for w in winners if w is not None)
    return Verdict("allow", texts, _display(tool, list(texts)))


def _unchecked(tool: str, patterns: tuple[_Pattern, ...], why: str) -> Verdict:
    """A subject the map cannot be matched against: the "*" action made at least ask.
    No grant covers the ask: "always" for "*" was given for lines that were checked."""
    star = next((p for p in patterns if p.regex is None), None)
    if star is not None and star.action == "deny":
        return Verdict("deny", (_ANY,), _display(tool, [_ANY]))
    return Verdict("ask", (), f"{tool}: ({why})")


def _display(tool: str, texts: list[str], notes: list[str] | None = None) -> str:
    return f"{tool}: " + ", ".join([f'"{shorten(t)}"' for t in texts] + (notes or []))


def _unique(texts: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(texts))


# --- parsing --------------------------------------------------------------------------


def _action(where: str, value: object) -> Action:
    if value not in ACTIONS:
        raise UsageError(
            f"invalid option '{where}': {shorten(repr(value), 80)} is not an action; "
            f'give "allow", "ask" or "deny"' + ("" if isinstance(value, str) else " or a map")
        )
    return value


def _parse_map(
    where: str, tool: str, kind: SubjectKind, value: dict[object, object]
) -> tuple[_Pattern, ...]:
    if kind == "none":
        raise UsageError(
            f"invalid option '{where}': give an action: page tool '{tool}' has no path or "
            "command to match"
        )
    if not value:
        raise UsageError(f"invalid option '{where}': an empty map; give an action or patterns")
    if len(value) > MAX_PATTERNS:
        raise UsageError(
            f"invalid option '{where}': {len(value)} patterns, more than {MAX_PATTERNS}; "
            "merge them with wider patterns"
        )
    patterns = []
    for text, action in value.items():
        key = f'{where}["{shorten(str(text), 80)}"]'
        if not isinstance(text, str) or not text:
            raise UsageError(f"invalid option '{key}': a pattern must not be empty")
        if len(text) > MAX_PATTERN_CHARS:
            raise UsageError(
                f"invalid option '{key}': a pattern of {len(text):,} characters, more "
                f"than {MAX_PATTERN_CHARS:,}"
            )
        try:
            regex = None if text == _ANY else _compile(text, kind)
        except ValueError as exc:
            raise UsageError(f"invalid option '{key}': {exc}") from None
        patterns.append(_Pattern(text, _action(key, action), regex))
    return tuple(patterns)


# --- globs ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _compile(pattern: str, kind: SubjectKind) -> re.Pattern[str]:
    """A glob as a regex for ``fullmatch`` (ValueError when it is malformed)."""
    if kind == "path":
        source = _path_regex(pattern)
    else:
        source = _glob_regex(pattern, star=".*", one=".", in_path=False)
        if pattern.endswith(" *"):  # `ls *` matches a bare `ls` as well
            bare = _glob_regex(pattern[:-2], star=".*", one=".", in_path=False)
            source = f"(?:{source}|{bare})"
    try:
        return re.compile(source, re.DOTALL)
    except re.error as exc:
        raise ValueError(f"bad pattern: {exc}") from None


def _path_regex(pattern: str) -> str:
    """``**`` as a whole segment spans segments; ``**/**`` is one. As in
    :func:`_glob_regex`, the segments between two ``**`` are matched atomically at their
    leftmost place (their end is fixed: no segment's regex crosses a ``/``)."""
    items: list[str | None] = []  # None is a `**`
    for segment in pattern.split("/"):
        if segment != "**":
            items.append(_glob_regex(segment, star="[^/]*", one="[^/]", in_path=True))
        elif not items or items[-1] is not None:
            items.append(None)
    out: list[str] = []
    k = 0
    while k < len(items):
        item, last = items[k], k == len(items) - 1
        if item is not None:
            out.append(item if last else item + "/")
        elif last:
            out.append(".*" if k == 0 else ".+")  # a final `**`: anything below
        else:
            end = k + 1
            while end < len(items) and items[end] is not None:
                end += 1
            if end < len(items):  # another `**` follows the run of segments
                run = "".join(f"{items[j]}/" for j in range(k + 1, end))
                out.append(f"(?>(?:[^/]+/)*?{run})")
                k = end
                continue
            out.append("(?:[^/]+/)*")
        k += 1
    return "".join(out)


def _glob_regex(glob: str, star: str, one: str, in_path: bool) -> str:
    """``*``, ``?``, classes and ``\\`` escapes as a regex.

    A ``*`` between two fixed-width runs becomes ``(?>STAR?RUN)``: the run's leftmost
    occurrence is always good enough when a ``*`` follows it, and the atomic group keeps
    the regex from backtracking into it, so that a pattern of many stars stays linear in
    the subject's length instead of exponential."""
    pieces: list[str | None] = []  # None is a star; the rest match one character each
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*":
            if not pieces or pieces[-1] is not None:
                pieces.append(None)
            i += 1
        elif c == "?":
            pieces.append(one)
            i += 1
        elif c == "[":
            cls, i = _char_class(glob, i)
            pieces.append(("(?!/)" if in_path else "") + cls)
        elif c == "\\" and i + 1 < len(glob):
            pieces.append(re.escape(glob[i + 1]))
            i += 2
        else:
            pieces.append(re.escape(c))
            i += 1
    out: list[str] = []
    k = 0
    while k < len(pieces):
        piece = pieces[k]
        if piece is not None:
            out.append(piece)
            k += 1
            continue
        end = k + 1
        while end < len(pieces) and pieces[end] is not None:
            end += 1
        run = "".join(p for p in pieces[k + 1 : end] if p is not None)
        if run and end < len(pieces):  # another star follows the run
            out.append(f"(?>{star}?{run})")
        else:
            out.append(star + run)
        k = end
    return "".join(out)


def _char_class(glob: str, start: int) -> tuple[str, int]:
    """The class ``[...]`` at ``start`` as a regex, and the index after it."""
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    i += negate
    body_start = i
    if i < len(glob) and glob[i] == "]":
        i += 1  # a `]` first is a member
    close = glob.find("]", i)
    if close < 0:
        raise ValueError(f"the class '[' at character {start + 1} is not closed with ']'")
    body = glob[body_start:close]
    members = "".join(
        "-" if ch == "-" and 0 < n < len(body) - 1 else re.escape(ch) for n, ch in enumerate(body)
    )
    return ("[^" if negate else "[") + members + "]", close + 1
