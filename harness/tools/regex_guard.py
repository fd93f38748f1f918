"""A worst-case bound for a regular expression from the model, checked before it runs.

Python's ``re`` backtracks, and a call cannot be interrupted: in the worker, a
catastrophic pattern (``(a+)+$``) would hang the harness until the page kills it. No
linear-time engine (``re2``, ``regex`` with a timeout) has a Pyodide wheel. So the
pattern is analysed on its parse tree (``re._parser``, the stdlib's own parser) and
either refused with a message the model can act on, or given a bound:

- **Refused**: backreferences and conditionals; a repeat (``*``, ``+``, ``{m,n}``)
  around anything that itself repeats (star height 2: ``(a+)+``, ``(\\w+\\s?)*``); a
  repeated group whose body is ambiguous (optional parts, lookarounds, or
  alternatives that can start with the same character: ``(a|ab)*``); a pattern over
  :data:`~harness.limits.MAX_PATTERN_CHARS`; a pattern whose bound leaves fewer than
  :data:`MIN_USEFUL_CHARS` characters to search.
- **Bounded**: what is left backtracks at most polynomially. With ``d`` variable
  repeats in sequence (``a.*b.*c`` has 2), ``p`` paths through the optional parts and
  alternatives (multiplied along a sequence, added across ``|``) and ``w`` the steps
  of one path, one ``search`` over ``n`` characters takes at most about
  ``n^(d+1) * w * p`` steps (``n^d * w * p`` for ``fullmatch``): besides those paths,
  each repeat's iteration count is the only choice backtracking can revisit, because
  every repeated body matches a fixed number of characters in one way. The caller searches at most
  :meth:`Bound.max_chars` characters, the largest ``n`` that keeps this under
  :data:`~harness.limits.REGEX_STEP_BUDGET`.
"""

from __future__ import annotations

import importlib
import re
import warnings
from dataclasses import dataclass
from typing import Any

from ..errors import ToolError
from ..limits import (
    MAX_PATTERN_CHARS,
    MAX_SEARCH_LINE_CHARS,
    MIN_USEFUL_CHARS,
    REGEX_STEP_BUDGET,
)

# The stdlib's own parser: private, but its tree has kept this shape since 3.11 (the
# in-Pyodide test tier runs these tests on 3.14). Typeshed has no stubs for it.
_c: Any = importlib.import_module("re._constants")
_sre_parse: Any = importlib.import_module("re._parser")

_SINGLE = {_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN, _c.CATEGORY}
_ZERO_WIDTH = {_c.AT}
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, *([_c.POSSESSIVE_REPEAT]
                                          if hasattr(_c, "POSSESSIVE_REPEAT") else [])}
_ATOMIC = getattr(_c, "ATOMIC_GROUP", None)
_MANY = 10**18  # paths are counted up to here (past any budget)

SIMPLER = "use a simpler pattern, or literal=true to search for the text as written"


class PatternRefused(ToolError):
    """The pattern could take too long (message names why and what to do)."""


@dataclass(frozen=True)
class Bound:
    """``degree``: variable repeats in sequence; ``width``: steps of one path through
    the fixed parts; ``paths``: how many such paths optional parts and alternatives
    allow (``(a?){30}`` has 2**30, which is why it is refused)."""

    degree: int
    width: int
    paths: int = 1

    def max_chars(self, anchored: bool = False) -> int:
        """The most characters one call may search within the step budget."""
        power = self.degree + (0 if anchored else 1)
        per_attempt = self.width * self.paths
        if power == 0:
            return MAX_SEARCH_LINE_CHARS if per_attempt <= REGEX_STEP_BUDGET else 0
        n = int((REGEX_STEP_BUDGET / per_attempt) ** (1 / power))
        return min(MAX_SEARCH_LINE_CHARS, n)


def check(pattern: str, flags: int = 0, *, anchored: bool = False, what: str = "regex") -> Bound:
    """The bound of ``pattern`` or :class:`PatternRefused`; invalid syntax is
    ``re.error`` (the caller words that)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternRefused(f"The {what} is {len(pattern):,} characters; the limit is "
                             f"{MAX_PATTERN_CHARS:,}: {SIMPLER}.")
    try:
        with warnings.catch_warnings():  # "possible nested set": not for the model to see
            warnings.simplefilter("ignore", FutureWarning)
            tree = _sre_parse.parse(pattern, flags)
        bound = _Analysis(bool(tree.state.flags & re.IGNORECASE)).sequence(list(tree))
    except RecursionError:  # the parser recurses once per group level
        raise PatternRefused(f"The {what} {_show(pattern)} nests groups too deeply; "
                             f"{SIMPLER}.") from None
    except _Refusal as exc:
        raise PatternRefused(f"The {what} {_show(pattern)} was refused: {exc} could take "
                             f"exponential time, and a search cannot be interrupted; "
                             f"{SIMPLER}.") from None
    if bound.max_chars(anchored) < MIN_USEFUL_CHARS:
        if bound.paths > 1000:
            why = (f"can match in about {bound.paths:.1e} ways at each position (optional "
                   "parts ? and alternatives | in a row multiply)")
        else:
            why = (f"has {bound.degree} variable-length repeats (*, +, {{m,n}}) in a row "
                   f"(at most {_max_degree(bound.width * bound.paths, anchored)} are allowed)")
        raise PatternRefused(f"The {what} {_show(pattern)} {why}, which could take too long "
                             f"on a long line; {SIMPLER}.")
    return bound


class _Refusal(Exception):
    """Why a part of the pattern cannot be bounded (a phrase for the message)."""


class _Analysis:
    """The bound of a parse tree (see the module doc for the rules)."""

    def __init__(self, ignore_case: bool) -> None:
        self.ignore_case = ignore_case

    def sequence(self, items: list[tuple[Any, Any]]) -> Bound:
        degree, width, paths = 0, 0, 1
        for op, av in items:
            item = self.item(op, av)
            degree += item.degree
            width += item.width
            paths = min(_MANY, paths * item.paths)  # choices in a row multiply
        return Bound(degree, max(width, 1), paths)

    def item(self, op: Any, av: Any) -> Bound:
        if op in _SINGLE or op in _ZERO_WIDTH:
            return Bound(0, 1)
        if op is _c.SUBPATTERN:
            return self.sequence(list(av[-1]))
        if _ATOMIC is not None and op is _ATOMIC:
            return self.sequence(list(av))
        if op in (_c.ASSERT, _c.ASSERT_NOT):
            return self.sequence(list(av[1]))
        if op is _c.BRANCH:
            parts = [self.sequence(list(branch)) for branch in av[1]]
            return Bound(max(p.degree for p in parts), sum(p.width for p in parts),
                         min(_MANY, sum(p.paths for p in parts)))
        if op in _REPEATS:
            return self.repeat(*av)
        if op in (_c.GROUPREF, _c.GROUPREF_EXISTS):
            raise _Refusal("a backreference (\\1, (?P=name), (?(1)...))")
        raise _Refusal(f"an unsupported construct ({op})")

    def repeat(self, low: int, high: int, body: Any) -> Bound:
        inner = self.sequence(list(body))
        if high <= 1:  # optional: one more path, not a loop
            return Bound(inner.degree, inner.width, min(_MANY, inner.paths + 1))
        if low == high:  # a fixed count repeats the body's choices that many times
            paths = _MANY if inner.paths > 1 and low > 60 else min(_MANY, inner.paths ** low)
            return Bound(inner.degree * low, inner.width * low, paths)
        if inner.degree:
            raise _Refusal("a repeat inside a repeat (like (a+)+ or (\\w+\\s?)*)")
        if not _unambiguous(list(body), self.ignore_case):
            raise _Refusal("a repeated group whose parts can match the same text in more "
                           "than one way (like (a|ab)* or (a?b)+)")
        return Bound(1, inner.width)  # an unambiguous body: one path per iteration count


def _unambiguous(items: list[tuple[Any, Any]], ignore_case: bool) -> bool:
    """A loop body that matches a given text in at most one way per start: a run of
    single characters, or alternatives of such runs whose first characters are sets
    known to be disjoint (``(?:ab|cd)``, ``(?:\\.|[^"\\])``)."""
    items = _unwrap(items)
    if len(items) == 1 and items[0][0] is _c.BRANCH:
        branches = [_unwrap(list(b)) for b in items[0][1][1]]
        if not all(b and _fixed_run(b) for b in branches):
            return False
        firsts = [_first_set(b[0], ignore_case) for b in branches]
        return all(_disjoint(a, b) for i, a in enumerate(firsts) for b in firsts[i + 1 :])
    return _fixed_run(items)


_CharSet = tuple[bool, frozenset[int]] | None
"""(negated, characters) for a first character; None when unknown (a category, a big
range): then it is taken to overlap everything."""


def _first_set(item: tuple[Any, Any], ignore_case: bool) -> _CharSet:
    op, av = item
    if op in (_c.LITERAL, _c.NOT_LITERAL):
        negated, parts = op is _c.NOT_LITERAL, [(_c.LITERAL, av)]
    elif op is _c.IN:
        negated = bool(av) and av[0][0] is _c.NEGATE
        parts = av[1:] if negated else av
    else:
        return None
    chars: set[int] = set()
    for kind, value in parts:
        if kind is _c.LITERAL:
            chars.add(value)
        elif kind is _c.RANGE and value[1] - value[0] < 5000:
            chars.update(range(value[0], value[1] + 1))
        else:
            return None
    if ignore_case:
        chars |= {ord(v) for c in chars for v in (chr(c).lower(), chr(c).upper()) if len(v) == 1}
    return negated, frozenset(chars)


def _disjoint(a: _CharSet, b: _CharSet) -> bool:
    if a is None or b is None or (a[0] and b[0]):
        return False
    if a[0] or b[0]:  # one set is "anything but": the other must lie inside its exclusions
        (_, excluded), (_, chars) = (a, b) if a[0] else (b, a)
        return chars <= excluded
    return not a[1] & b[1]


def _unwrap(items: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    while len(items) == 1 and items[0][0] is _c.SUBPATTERN:
        items = list(items[0][1][-1])
    return items


def _fixed_run(items: list[tuple[Any, Any]]) -> bool:
    for op, av in items:
        if op in _SINGLE or op in _ZERO_WIDTH:
            continue
        if op is _c.SUBPATTERN and _fixed_run(list(av[-1])):
            continue
        if op in _REPEATS and av[0] == av[1] and _fixed_run(list(av[2])):
            continue
        return False
    return True


def _max_degree(width: int, anchored: bool) -> int:
    degree = 0
    while Bound(degree + 1, width).max_chars(anchored) >= MIN_USEFUL_CHARS:
        degree += 1
    return degree


def _show(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:79] + "…")


def compile_checked(pattern: str, flags: int = 0, *, anchored: bool = False,
                    what: str = "regex") -> tuple[re.Pattern[str], Bound]:
    """:func:`check`, then ``re.compile``."""
    bound = check(pattern, flags, anchored=anchored, what=what)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(pattern, flags), bound
    except RecursionError:
        raise PatternRefused(f"The {what} {_show(pattern)} nests groups too deeply; "
                             f"{SIMPLER}.") from None
