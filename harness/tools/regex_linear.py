"""A regex search in time linear in the text: a Pike VM (Thompson's construction) over
the stdlib's own parse tree, for patterns :mod:`harness.tools.regex_guard` refuses or
texts longer than its bound allows, where the answer needed is only "does it match".

It runs every alternative in step, one set of states per character, so no pattern can
make it backtrack: at most ``len(text) * len(program)`` steps, and the caller gives a
step budget (:class:`StepsExceeded` past it). Single characters are tested by ``re``
itself (each node compiled alone), so classes, categories and case rules are exactly
``re``'s. What a set of states cannot express is :class:`Unsupported`:
backreferences, lookarounds, conditionals, possessive repeats, atomic groups and
inline flags on a group.
"""

from __future__ import annotations

import importlib
import re
import warnings
from collections.abc import Callable
from typing import Any

_c: Any = importlib.import_module("re._constants")
_sre_parse: Any = importlib.import_module("re._parser")
_sre_compile: Any = importlib.import_module("re._compiler")

MAX_PROGRAM = 5000
"""Instructions one pattern may compile to (``{m,n}`` repeats are unrolled)."""

_SINGLE = {_c.LITERAL, _c.NOT_LITERAL, _c.ANY, _c.IN, _c.CATEGORY}
_WORD = re.compile(r"\w")


class Unsupported(Exception):
    """The pattern uses something a set of states cannot run (the message says what)."""


class StepsExceeded(Exception):
    """The search would take more steps than it was given."""


# One instruction: ("char", test) | ("split", a, b) | ("jmp", a) | ("at", test) | ("match",)
_Instr = tuple[Any, ...]


class LinearPattern:
    """A compiled pattern; :meth:`search` is ``re.search(...) is not None``."""

    def __init__(self, pattern: str) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            tree = _sre_parse.parse(pattern, 0)
        self._state = tree.state
        self._multiline = bool(tree.state.flags & re.MULTILINE)
        self._prog: list[_Instr] = []
        self._emit_sequence(list(tree))
        self._prog.append(("match",))

    # -- compiling -------------------------------------------------------------------

    def _add(self, instr: _Instr) -> int:
        if len(self._prog) >= MAX_PROGRAM:
            raise Unsupported(f"it unrolls to more than {MAX_PROGRAM} steps")
        self._prog.append(instr)
        return len(self._prog) - 1

    def _emit_sequence(self, items: list[tuple[Any, Any]]) -> None:
        for op, av in items:
            self._emit(op, av)

    def _emit(self, op: Any, av: Any) -> None:
        if op in _SINGLE:
            self._add(("char", self._char_test(op, av)))
        elif op is _c.AT:
            self._add(("at", self._at_test(av)))
        elif op is _c.SUBPATTERN:
            if av[1] or av[2]:
                raise Unsupported("inline flags on a group")
            self._emit_sequence(list(av[-1]))
        elif op is _c.BRANCH:
            self._emit_branch([list(b) for b in av[1]])
        elif op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            self._emit_repeat(*av)
        else:
            raise Unsupported(f"{str(op).lower()} (a backreference, lookaround, possessive "
                              "repeat or atomic group)")

    def _emit_branch(self, branches: list[list[tuple[Any, Any]]]) -> None:
        jumps = []
        for branch in branches[:-1]:
            split = self._add(("split", 0, 0))
            self._emit_sequence(branch)
            jumps.append(self._add(("jmp", 0)))
            self._prog[split] = ("split", split + 1, len(self._prog))
        self._emit_sequence(branches[-1])
        for j in jumps:
            self._prog[j] = ("jmp", len(self._prog))

    def _emit_repeat(self, low: int, high: int, body: Any) -> None:
        items = list(body)
        for _ in range(low):
            self._emit_sequence(items)
        if high == _c.MAXREPEAT:  # body*: split over the body, back to the split
            split = self._add(("split", 0, 0))
            self._emit_sequence(items)
            self._add(("jmp", split))
            self._prog[split] = ("split", split + 1, len(self._prog))
            return
        splits = []
        for _ in range(high - low):  # each optional copy may end the repeat
            splits.append(self._add(("split", 0, 0)))
            self._emit_sequence(items)
        for s in splits:
            self._prog[s] = ("split", s + 1, len(self._prog))

    def _char_test(self, op: Any, av: Any) -> Callable[[str], bool]:
        sub = _sre_parse.SubPattern(self._state, [(op, av)])
        one = _sre_compile.compile(sub, self._state.flags)
        cache: dict[str, bool] = {}

        def test(ch: str) -> bool:
            hit = cache.get(ch)
            if hit is None:
                hit = cache[ch] = one.fullmatch(ch) is not None
                if len(cache) > 4096:
                    cache.clear()
            return hit

        return test

    def _at_test(self, where: Any) -> Callable[[str, int], bool]:
        multiline = self._multiline
        if where is _c.AT_BEGINNING:
            return (lambda s, i: i == 0 or s[i - 1] == "\n") if multiline else (lambda s, i: i == 0)
        if where is _c.AT_BEGINNING_STRING:
            return lambda s, i: i == 0
        if where is _c.AT_END:
            if multiline:
                return lambda s, i: i == len(s) or s[i] == "\n"
            return lambda s, i: i == len(s) or (i == len(s) - 1 and s[i] == "\n")
        if where is _c.AT_END_STRING:
            return lambda s, i: i == len(s)
        if where in (_c.AT_BOUNDARY, _c.AT_NON_BOUNDARY):
            want = where is _c.AT_BOUNDARY

            def boundary(s: str, i: int) -> bool:
                before = i > 0 and _WORD.match(s[i - 1]) is not None
                after = i < len(s) and _WORD.match(s[i]) is not None
                return (before != after) == want

            return boundary
        raise Unsupported(f"the anchor {where}")

    # -- running ---------------------------------------------------------------------

    def search(self, text: str, budget: int) -> tuple[bool, int]:
        """Whether the pattern matches somewhere in ``text``, and the steps it took;
        :class:`StepsExceeded` when that would be more than ``budget``."""
        prog = self._prog
        steps = 0
        seen = [-1] * len(prog)
        current: list[int] = []
        for pos in range(len(text) + 1):
            following: list[int] = []
            stack = [0, *current]  # a search: every position may start a match
            while stack:
                pc = stack.pop()
                if seen[pc] == pos:
                    continue
                seen[pc] = pos
                steps += 1
                instr = prog[pc]
                kind = instr[0]
                if kind == "char":
                    if pos < len(text) and instr[1](text[pos]):
                        following.append(pc + 1)
                elif kind == "split":
                    stack.append(instr[2])
                    stack.append(instr[1])
                elif kind == "jmp":
                    stack.append(instr[1])
                elif kind == "at":
                    if instr[1](text, pos):
                        stack.append(pc + 1)
                else:  # match
                    return True, steps
            if steps > budget:
                raise StepsExceeded
            current = following
        return False, steps
