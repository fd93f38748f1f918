"""A page tool's arguments checked against its JSON Schema in bounded time.

The schema may come from an MCP server (embed/page/mcp.mjs), so it is not trusted to be
cheap: jsonschema runs each ``pattern`` (and ``patternProperties``, and their union in
``additionalProperties``) with ``re.search``, which backtracks without bound and cannot
be interrupted, and combinators (``anyOf`` inside a recursive ``$ref``) can multiply the
work. So, while :func:`bounded` is active:

- every regex jsonschema runs goes through :func:`_search`: ``re`` when
  :mod:`~harness.tools.regex_guard` bounds the pattern and the text is short enough for
  that bound to fit :data:`RE_STEPS`; else the linear matcher
  (:mod:`~harness.tools.regex_linear`) within :data:`LINEAR_STEPS`; a pattern neither can
  run (a backreference inside a nested repeat, a syntax ``re`` does not know) is not
  guessed at: the call is refused, naming the pattern;
- every keyword jsonschema applies counts, at most :data:`KEYWORD_STEPS` a call.

Past a budget the call is refused (:class:`~harness.errors.ToolError`): the worker never
spends more than about a few tens of milliseconds checking one call.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from ..errors import ToolError
from .regex_guard import Bound, PatternRefused, compile_checked
from .regex_linear import LinearPattern, StepsExceeded, Unsupported

RE_STEPS = 10_000_000
"""``re`` steps one call's checks may take in the worst case (regex_guard's estimate)."""
LINEAR_STEPS = 30_000
"""Steps of the linear matcher one call's checks may take."""
KEYWORD_STEPS = 20_000
"""Schema keywords one call's check may apply."""


class CheckTooCostly(ToolError):
    """The arguments would take too long to check; the message names why."""


class _Meter:
    def __init__(self) -> None:
        self.re_steps = RE_STEPS
        self.linear_steps = LINEAR_STEPS
        self.keywords = KEYWORD_STEPS


_meter: _Meter | None = None


@contextlib.contextmanager
def bounded() -> Iterator[None]:
    """Checks run inside this are bounded by one fresh budget."""
    global _meter
    outer, _meter = _meter, _Meter()
    try:
        yield
    finally:
        _meter = outer


class _Pattern:
    """One schema pattern, analysed once: ``re`` with its bound, and the linear
    matcher (either may be missing, with why)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.regex: re.Pattern[str] | None = None
        self.bound: Bound | None = None
        self.linear: LinearPattern | None = None
        self.why = ""
        with contextlib.suppress(PatternRefused, re.error, RecursionError):
            # else the linear matcher, or a refusal naming why
            self.regex, self.bound = compile_checked(pattern, what="pattern")
        try:
            self.linear = LinearPattern(pattern)
        except Unsupported as exc:
            self.why = f"it uses {exc}"
        except (re.error, RecursionError) as exc:
            self.why = f"Python's re cannot read it: {str(exc)[:100]}"

    def re_cost(self, chars: int) -> int:
        """The most steps ``re.search`` can take over ``chars`` characters."""
        assert self.bound is not None
        bound = self.bound
        return int(bound.width * bound.paths * max(chars, 1) ** (bound.degree + 1))


@lru_cache(maxsize=256)
def _analysed(pattern: str) -> _Pattern:
    return _Pattern(pattern)


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:79] + "…")


def _search(pattern: str, string: str, flags: int = 0) -> bool:
    """``re.search`` for jsonschema, bounded (a truthy value when it matches)."""
    meter = _meter or _Meter()  # outside a call's check (the meta-schema's own patterns)
    p = _analysed(pattern)
    if flags:  # jsonschema passes none; anything else is not ours to bound
        raise CheckTooCostly(f"The schema pattern {_shown(pattern)} cannot be checked here.")
    if p.regex is not None and (cost := p.re_cost(len(string))) <= meter.re_steps:
        meter.re_steps -= cost
        return p.regex.search(string) is not None
    if p.linear is not None:
        try:
            found, steps = p.linear.search(string, meter.linear_steps)
        except StepsExceeded:
            meter.linear_steps = 0
            raise CheckTooCostly(
                f"A value of {len(string):,} characters is too long to check against the "
                f"schema pattern {_shown(pattern)} in bounded time; the call was not run. "
                "Send a shorter value.") from None
        meter.linear_steps -= steps
        return found
    raise CheckTooCostly(
        f"The tool's schema has the pattern {_shown(pattern)}, which cannot be checked here "
        f"in bounded time ({p.why}); the call was not run. A call that gives no value it "
        "applies to can run; otherwise tell the user the tool's schema needs fixing.")


class _GuardedRe:
    """What jsonschema's modules see as ``re``: ``search`` bounded, the rest ``re``."""

    def search(self, pattern: str, string: str, flags: int = 0) -> bool:
        return _search(pattern, string, flags)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


def _counted(keyword: str, check: Callable[..., Any]) -> Callable[..., Any]:
    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        meter = _meter
        if meter is not None:
            meter.keywords -= 1
            if meter.keywords < 0:
                raise CheckTooCostly(
                    "The arguments take too long to check against the tool's schema (more "
                    f"than {KEYWORD_STEPS:,} schema steps); the call was not run. Send "
                    "smaller arguments.")
        return check(validator, value, instance, schema) or iter(())

    return run


def guarded_validator(cls: Any) -> Any:
    """``cls`` (a jsonschema validator class) with every keyword counted, and the
    jsonschema modules' regex searches bounded (installed once, for the worker)."""
    from jsonschema import validators

    for name in ("jsonschema._validators", "jsonschema._utils"):
        module = importlib.import_module(name)
        if not isinstance(getattr(module, "re", None), _GuardedRe):
            setattr(module, "re", _GuardedRe())  # noqa: B010 -- every regex jsonschema runs, whatever keyword
    return validators.extend(cls, {k: _counted(k, v) for k, v in cls.VALIDATORS.items()})
