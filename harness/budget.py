"""Usage, cost and budgets: what model requests and tool calls used, counted per run,
per thread and per harness, and the limits the page set on them.

A :class:`Tally` counts one scope. A run's :class:`Meter` counts into its own tally and
its thread's and harness's (the session keeps those), and answers the agent's two
questions: may the next model request go out, and with how many output tokens at most
(:meth:`Meter.check_request`); may the next tool call run (:meth:`Meter.check_tool_call`).
A limit is never passed on purpose: a request goes out only if its input (estimated,
calibrated on what the provider reported for the run's last request) plus at least
:data:`MIN_OUTPUT_TOKENS` of answer fit in what is left, and its ``max_tokens`` is
lowered to what is left. What a provider reports past that (its own count differs from
the estimate) is counted all the same, and the next request is refused.

Cost is priced from ``model.prices`` (USD per million tokens) and is never guessed: a
response with tokens of a kind that has no price makes the tally's cost unknown (null),
and a cost limit over an unknown cost stops the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .config import Budget, BudgetLimits
from .events import BudgetKind, BudgetLimit, BudgetScope, Tokens, Totals, Usage
from .models.configs import Prices

MIN_OUTPUT_TOKENS = 64
"""A request goes out only with room for at least this many output tokens."""
NOTICE_AT = 0.8
"""The share of a limit at which the page gets a ``budget`` notice (once per limit)."""
_KINDS: tuple[tuple[BudgetKind, str], ...] = (
    ("tokens", "tokens"), ("cost", "cost"), ("requests", "requests"),
    ("toolCalls", "tool_calls"), ("timeMs", "time_ms"))
_WORDS = {"tokens": "tokens", "cost": "cost (USD)", "requests": "model requests",
          "toolCalls": "tool calls", "timeMs": "wall time (ms)"}
_WHOSE = {"run": "the run's", "thread": "the thread's", "harness": "the harness's"}


def price(tokens: Tokens, prices: Prices | None) -> float | None:
    """USD for one response's tokens; None when a kind it has is not priced."""
    uncached = max(tokens.input_tokens - tokens.cache_read_tokens - tokens.cache_write_tokens, 0)
    parts = [(uncached, None if prices is None else prices.input),
             (tokens.output_tokens, None if prices is None else prices.output),
             (tokens.cache_read_tokens, None if prices is None else prices.cache_read),
             (tokens.cache_write_tokens, None if prices is None else prices.cache_write)]
    if any(count and per_million is None for count, per_million in parts):
        return None
    return sum(count * (per_million or 0) for count, per_million in parts) / 1_000_000


@dataclass
class Tally:
    """What one scope used. ``cost_known`` turns false for good once a response could
    not be priced (its cost is then null: a sum with an unknown part is unknown)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float = 0.0
    cost_known: bool = True
    requests: int = 0
    tool_calls: int = 0
    time_ms: int = 0

    @classmethod
    def load(cls, data: Any) -> Tally:
        """A tally saved with :meth:`dump` (a thread's); anything else counts from 0."""
        try:
            totals = Totals.model_validate(data)
        except ValueError:
            return cls()
        fields = totals.model_dump(exclude={"cost"})
        return cls(**fields, cost=totals.cost or 0.0, cost_known=totals.cost is not None)

    def add(self, tokens: Tokens | None, cost: float | None) -> None:
        """One model request, and what it reported (None: nothing)."""
        self.requests += 1
        if tokens is None:
            return
        self.input_tokens += tokens.input_tokens
        self.output_tokens += tokens.output_tokens
        self.cache_read_tokens += tokens.cache_read_tokens
        self.cache_write_tokens += tokens.cache_write_tokens
        self.reasoning_tokens += tokens.reasoning_tokens
        if cost is None:
            self.cost_known = False
        else:
            self.cost += cost

    def used(self, kind: BudgetKind) -> float | None:
        """What a limit of ``kind`` is measured against (None: an unknown cost)."""
        if kind == "tokens":
            return self.input_tokens + self.output_tokens
        if kind == "cost":
            return self.cost if self.cost_known else None
        return self.requests if kind == "requests" else (
            self.tool_calls if kind == "toolCalls" else self.time_ms)

    def totals(self, extra_ms: int = 0) -> Totals:
        return Totals(input_tokens=self.input_tokens, output_tokens=self.output_tokens,
                      cache_read_tokens=self.cache_read_tokens,
                      cache_write_tokens=self.cache_write_tokens,
                      reasoning_tokens=self.reasoning_tokens,
                      cost=round(self.cost, 9) if self.cost_known else None,
                      requests=self.requests, tool_calls=self.tool_calls,
                      time_ms=self.time_ms + extra_ms)

    def dump(self) -> dict[str, Any]:
        """As the page sees it (camelCase), and as a thread keeps it."""
        return self.totals().model_dump(mode="json", by_alias=True)


@dataclass
class Scope:
    """One scope a run counts into: its name, its tally, its limits now, and the key
    its notices are remembered by (a thread's id: told once per thread and limit)."""

    name: BudgetScope
    tally: Tally
    limits: Callable[[], BudgetLimits | None]
    key: str


@dataclass
class Meter:
    """One run's counting and checking (see the module doc). ``scopes``: the run's own,
    its thread's and the harness's; ``told``: the notices already sent, shared with the
    session so that a thread's or the harness's is sent once across runs."""

    scopes: list[Scope]
    prices: Prices | None
    told: set[tuple[str, BudgetKind, float]] = field(default_factory=set)
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    parent: Meter | None = None
    """A subagent's: its parent run's meter, whose scopes follow this run's own one
    (its usage counts there too; the wall time there is the parent's)."""
    # (raw estimate, reported input) of the last request counted; the request checked
    _calibration: tuple[int, int] | None = None
    _pending: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()

    @property
    def run(self) -> Tally:
        return self.scopes[0].tally

    def elapsed_ms(self) -> int:
        return int((self.clock() - self.started) * 1000)

    def _elapsed(self, index: int) -> int:
        """The wall time of the run whose scope ``self.scopes[index]`` is, so far."""
        if self.parent is None or index == 0:
            return self.elapsed_ms()
        return self.parent._elapsed(index - 1)

    def _limits(self) -> Iterator[tuple[Scope, BudgetKind, float, float | None]]:
        """Every limit in force: its scope, kind, maximum and what is used of it."""
        for index, scope in enumerate(self.scopes):
            limits = scope.limits()
            if limits is None:
                continue
            for kind, attr in _KINDS:
                maximum = getattr(limits, attr)
                if maximum is None:
                    continue
                used = scope.tally.used(kind)
                if kind == "timeMs" and used is not None:
                    used += self._elapsed(index)
                yield scope, kind, maximum, used

    # -- the agent's questions ------------------------------------------------

    def estimate(self, raw: int) -> int:
        """The next request's input tokens: ``raw`` (harness/compaction.py's estimate of
        the whole request) calibrated on the last request the provider counted."""
        if self._calibration is None:
            return raw
        then, reported = self._calibration
        return max(reported + raw - then, 0)

    def check_request(self, raw_estimate: Callable[[], int]) -> BudgetLimit | int | None:
        """Before a model request: the limit it would pass (the run stops), or the most
        output tokens it may ask for (None: no token or cost limit). ``raw_estimate``
        is called only when a token or cost limit needs it."""
        limits = list(self._limits())
        raw = (raw_estimate() if any(kind in ("tokens", "cost") for _, kind, _, _ in limits)
               else None)
        estimate = 0 if raw is None else self.estimate(raw)
        room: float | None = None
        for scope, kind, maximum, used in limits:
            if kind == "cost" and used is None:
                return self._limit(scope, kind, maximum, used, "a response's cost could not "
                                   "be priced (model.prices lacks a price its tokens need)")
            assert used is not None
            if (kind == "requests" and used + 1 > maximum) or (kind == "timeMs"
                                                              and used >= maximum):
                return self._limit(scope, kind, maximum, used)
            left: float | None = None
            if kind == "tokens":
                left = maximum - used - estimate
            elif kind == "cost" and self.prices is not None:
                money = maximum - used - estimate * self.prices.input / 1_000_000
                left = (money * 1_000_000 / self.prices.output if self.prices.output
                        else (None if money > 0 else 0))
            if left is not None:
                if left < MIN_OUTPUT_TOKENS:
                    return self._limit(scope, kind, maximum, used)
                room = left if room is None else min(room, left)
        self._pending = None if raw is None else (raw, estimate)
        return None if room is None else int(room)

    def check_tool_call(self) -> BudgetLimit | None:
        """Before a tool call: the limit running it would pass, or None."""
        for scope, kind, maximum, used in self._limits():
            if used is not None and ((kind == "toolCalls" and used + 1 > maximum)
                                     or (kind == "timeMs" and used >= maximum)):
                return self._limit(scope, kind, maximum, used)
        return None

    def seconds_left(self) -> float | None:
        """Until the first wall-time limit, or None when there is none."""
        left = [maximum - used for _, kind, maximum, used in self._limits()
                if kind == "timeMs" and used is not None]
        return None if not left else max(min(left), 0) / 1000

    def time_limit(self) -> BudgetLimit:
        """The wall-time limit that ran out first (after :meth:`seconds_left` ran out)."""
        scope, kind, maximum, used = min(
            ((s, k, m, u) for s, k, m, u in self._limits() if k == "timeMs" and u is not None),
            key=lambda row: row[2] - (row[3] or 0))
        return self._limit(scope, kind, maximum, used)

    # -- counting -------------------------------------------------------------

    def record_request(self, tokens: Tokens | None) -> Usage | None:
        """A model request was made (it may have failed: it is counted all the same);
        returns its usage as events say it."""
        cost = None if tokens is None else price(tokens, self.prices)
        for scope in self.scopes:
            scope.tally.add(tokens, cost)
        if tokens is not None and self._pending is not None:
            self._calibration = (self._pending[0], tokens.input_tokens)
        self._pending = None
        if tokens is None:
            return None
        return Usage(**tokens.model_dump(), cost=None if cost is None else round(cost, 9))

    def record_tool_call(self) -> None:
        for scope in self.scopes:
            scope.tally.tool_calls += 1

    def finish(self) -> Totals:
        """The run is over: its wall time goes to every scope (a subagent's to its own
        only: its parent's run counts its own time); returns the run's totals."""
        elapsed = self.elapsed_ms()
        for scope in self.scopes if self.parent is None else self.scopes[:1]:
            scope.tally.time_ms += elapsed
        return self.run.totals()

    def notices(self) -> list[BudgetLimit]:
        """The limits newly past :data:`NOTICE_AT` (each told once)."""
        out = []
        for scope, kind, maximum, used in self._limits():
            key = (scope.key, kind, maximum)
            if used is not None and used >= NOTICE_AT * maximum and key not in self.told:
                self.told.add(key)
                out.append(self._limit(scope, kind, maximum, used, notice=True))
        return out

    def _limit(self, scope: Scope, kind: BudgetKind, maximum: float, used: float | None,
               why: str | None = None, notice: bool = False) -> BudgetLimit:
        whose = _WHOSE[scope.name]
        shown = "unknown" if used is None else f"{used:,.6g}"
        if notice:
            share = int(100 * (used or 0) / maximum) if maximum else 100
            message = (f"{share} % of {whose} budget of {_WORDS[kind]} is used "
                       f"({shown} of {maximum:,.6g})")
        else:
            message = (f"stopped by {whose} budget of {_WORDS[kind]}: {shown} of "
                       f"{maximum:,.6g} used" + (f"; {why}" if why else
                                                 ", and the next step would pass it"))
        return BudgetLimit(scope=scope.name, limit=kind, max=maximum, used=used, message=message)


def limits_of(budget: Callable[[], Budget | None],
              scope: BudgetScope) -> Callable[[], BudgetLimits | None]:
    """The limits of one scope as they are now (``h.setBudget`` may change them)."""

    def now() -> BudgetLimits | None:
        current = budget()
        return None if current is None else getattr(current, scope)

    return now


def unmetered(run_id: str) -> Meter:
    """A meter that only counts (no limits, no prices): a run given none."""
    return Meter([Scope("run", Tally(), lambda: None, run_id)], None)
