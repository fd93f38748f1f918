"""Usage, cost and budgets (harness/budget.py) through the session and the agent: the
scripted model reports usage per turn, the session counts it per run, thread and
harness, and every budget kind stops a run cleanly at its limit."""

import asyncio
import json

import pytest
from slow_tool import Slow

from harness.agent import INTERRUPTED, Agent, RunContext
from harness.budget import Meter, Scope, Tally, price
from harness.config import BudgetLimits
from harness.errors import UsageError
from harness.events import Tokens
from harness.messages import AssistantMessage, ToolResult, UserMessage
from harness.models.configs import Prices
from harness.models.scripted import ScriptedModel, ScriptedTurn
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.base import ToolContext, ToolSet
from harness.workspace.jail import Workspace

USAGE = {"inputTokens": 1000, "outputTokens": 100}


def writes(n, usage=USAGE):
    """n turns that each write a file (w1.txt ...), then a final answer."""
    turns = [{"text": f"step {i}", "usage": usage,
              "toolCalls": [{"name": "write", "arguments": {"path": f"w{i}.txt",
                                                            "content": str(i)}}]}
             for i in range(1, n + 1)]
    return [*turns, {"text": "all done", "usage": usage}]


def make(tmp_path, turns, budget=None, prices=None, **options):
    runtime = NativeRuntime(str(tmp_path / "ws"), threads=str(tmp_path / "state" / "threads"))
    model = {"api": "scripted", "turns": turns}
    if prices is not None:
        model["prices"] = prices
    config = {"model": model, **options}
    if budget is not None:
        config["budget"] = budget
    return Session.from_options(json.dumps(config), runtime), runtime


def prompt(session, run_id, text="go"):
    return asyncio.run(_prompt(session, run_id, text))


async def _prompt(session, run_id, text):
    return await session.prompt(run_id, text)


def events_of(runtime, run_id):
    return [m for m in runtime.messages if m.get("runId") == run_id]


def written(tmp_path):
    return sorted(p.name for p in (tmp_path / "ws").glob("w*.txt"))


# -- pricing --------------------------------------------------------------------------

PRICES = Prices(input=3, output=15, cache_read=0.3, cache_write=3.75)


@pytest.mark.parametrize(("tokens", "prices", "cost"), [
    (Tokens(), None, 0.0),  # nothing used costs nothing, priced or not
    (Tokens(input_tokens=1_000_000, output_tokens=1_000_000), PRICES, 18.0),
    # cache reads and writes are parts of the input, priced apart
    (Tokens(input_tokens=1_000_000, cache_read_tokens=500_000, cache_write_tokens=100_000),
     PRICES, 400_000 * 3 / 1e6 + 500_000 * 0.3 / 1e6 + 100_000 * 3.75 / 1e6),
    (Tokens(input_tokens=10, output_tokens=5), None, None),  # no prices: never a guess
    (Tokens(input_tokens=10, cache_read_tokens=4), Prices(input=1, output=1), None),
    (Tokens(input_tokens=10, output_tokens=5), Prices(input=1, output=1), 15 / 1e6),
])
def test_price(tokens, prices, cost):
    assert price(tokens, prices) == pytest.approx(cost) if cost is not None else (
        price(tokens, prices) is None)


def test_a_tally_round_trips_and_an_unknown_cost_stays_unknown():
    tally = Tally()
    tally.add(Tokens(input_tokens=5, output_tokens=2), 0.5)
    tally.add(None, None)  # a request that reported nothing: counted as a request
    assert tally.dump()["requests"] == 2 and tally.dump()["cost"] == 0.5
    tally.add(Tokens(input_tokens=1), None)
    again = Tally.load(tally.dump())
    assert again.dump() == tally.dump() and again.dump()["cost"] is None
    assert Tally.load({"inputTokens": "many"}) == Tally()  # damaged: counts from 0


# -- usage through a session ------------------------------------------------------------

def test_usage_is_in_turn_end_run_end_the_thread_and_the_harness(tmp_path):
    turns = [{"text": "a", "usage": {"inputTokens": 100, "outputTokens": 10,
                                     "cacheReadTokens": 40, "reasoningTokens": 3},
              "toolCalls": [{"name": "ls", "arguments": {}}]},
             {"text": "b", "usage": {"inputTokens": 200, "outputTokens": 20}}]
    s, rt = make(tmp_path, [*turns, {"text": "c", "usage": USAGE}],
                 prices={"input": 2, "output": 10, "cacheRead": 0.5})
    prompt(s, "r1")
    ends = [e for e in events_of(rt, "r1") if e["type"] == "turn_end"]
    assert ends[0]["usage"] == {"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 40,
                                "cacheWriteTokens": 0, "reasoningTokens": 3,
                                "cost": pytest.approx((60 * 2 + 40 * 0.5 + 10 * 10) / 1e6)}
    run_end = events_of(rt, "r1")[-1]
    usage = run_end["usage"]
    assert (usage["inputTokens"], usage["outputTokens"], usage["requests"],
            usage["toolCalls"]) == (300, 30, 2, 1)
    assert usage["cost"] == pytest.approx((60 * 2 + 40 * 0.5 + 10 * 10 + 200 * 2 + 20 * 10) / 1e6)
    prompt(s, "r2")
    value = json.loads(s.usage('{"op": "usage"}'))["value"]
    assert value["harness"]["requests"] == 3 and value["thread"]["requests"] == 3
    assert value["harness"]["inputTokens"] == 1300 and value["budget"] is None
    listed = json.loads(s.threads('{"op": "list"}'))["value"]["threads"][0]
    assert listed["usage"]["inputTokens"] == 1300


def test_a_threads_usage_survives_a_reload_and_a_new_thread_starts_at_zero(tmp_path):
    s, _ = make(tmp_path, writes(1))
    prompt(s, "r1")
    again, _ = make(tmp_path, [])  # the same storage: the page reloaded
    value = json.loads(again.usage('{"op": "usage"}'))["value"]
    assert value["thread"]["inputTokens"] == 2000 and value["thread"]["requests"] == 2
    assert value["harness"]["requests"] == 0  # a harness counts from its creation
    json.loads(again.threads('{"op": "create"}'))
    assert json.loads(again.usage('{"op": "usage"}'))["value"]["thread"]["requests"] == 0


# -- each budget kind: at the limit, one over ---------------------------------------------

@pytest.mark.parametrize(("limit", "requests"), [(1, 1), (2, 2), (3, 3)])
def test_requests_limit_exactly(tmp_path, limit, requests):
    s, rt = make(tmp_path, writes(5), budget={"run": {"requests": limit}})
    result = prompt(s, "r1")
    assert result.stop_reason == "budget" and result.usage.requests == requests
    assert result.budget.scope == "run" and result.budget.limit == "requests"
    assert len(s.agent.model.requests) == requests  # no request past the limit
    assert written(tmp_path) == [f"w{i}.txt" for i in range(1, requests + 1)]
    end = events_of(rt, "r1")[-1]
    assert end["stopReason"] == "budget" and end["budget"]["limit"] == "requests"
    assert end["text"] == f"step {requests}"  # the partial answer is kept


def test_a_run_under_its_limits_is_not_stopped(tmp_path):
    s, _ = make(tmp_path, writes(2), budget={"run": {"requests": 3, "toolCalls": 2}})
    assert prompt(s, "r1").stop_reason == "stop"


@pytest.mark.parametrize(("limit", "run"), [(0, 0), (1, 1), (2, 2)])
def test_tool_calls_limit_exactly(tmp_path, limit, run):
    turns = [{"text": "both", "toolCalls": [
        {"name": "write", "arguments": {"path": "w1.txt", "content": "1"}},
        {"name": "write", "arguments": {"path": "w2.txt", "content": "2"}}]},
        {"text": "done"}]
    s, rt = make(tmp_path, turns, budget={"run": {"toolCalls": limit}})
    result = prompt(s, "r1")
    assert written(tmp_path) == [f"w{i}.txt" for i in range(1, run + 1)]
    ends = [e for e in events_of(rt, "r1") if e["type"] == "tool_end"]
    assert [e["isError"] for e in ends] == [False] * run + [True] * (2 - run)
    if run < 2:
        assert result.stop_reason == "budget" and result.budget.limit == "toolCalls"
        assert "Not run: stopped by the run's budget of tool calls" in ends[-1]["output"]
        assert len(s.agent.model.requests) == 1  # not asked again after a refused call
    else:
        assert result.stop_reason == "stop"
    history = s.conversations.store.current.history  # every call has its result
    calls = [c.id for m in history if isinstance(m, AssistantMessage) for c in m.tool_calls]
    assert calls == [m.call_id for m in history if isinstance(m, ToolResult)]


def test_tokens_limit_never_lets_a_request_pass_it(tmp_path):
    s, _ = make(tmp_path, writes(8), budget={"run": {"tokens": 5000}})
    result = prompt(s, "r1")
    assert result.stop_reason == "budget" and result.budget.limit == "tokens"
    requests = list(s.agent.model.requests)
    assert 1 <= len(requests) < 5
    for i, request in enumerate(requests):
        used = i * 1100  # what the requests before it used
        assert request.max_output_tokens is not None
        assert used + 1000 + request.max_output_tokens <= 5000  # its input, then its answer
    assert result.usage.input_tokens + result.usage.output_tokens <= 5000
    assert "the next step would pass it" in result.budget.message


def test_cost_limit_and_an_unpriced_response(tmp_path):
    prices = {"input": 1, "output": 2}  # 1000 in + 100 out = 0.0012 a request
    s, _ = make(tmp_path, writes(8), budget={"run": {"cost": 0.0030}}, prices=prices)
    result = prompt(s, "r1")
    assert result.stop_reason == "budget" and result.budget.limit == "cost"
    assert 0 < result.usage.cost <= 0.0030
    for request in s.agent.model.requests:
        assert request.max_output_tokens is not None
    cached = {"inputTokens": 1000, "outputTokens": 1, "cacheReadTokens": 500}
    s, _ = make(tmp_path / "b", writes(3, cached), budget={"run": {"cost": 1}}, prices=prices)
    result = prompt(s, "r1")  # no cacheRead price: the cost is unknown, the run stops
    assert result.stop_reason == "budget" and result.usage.cost is None
    assert "could not be priced" in result.budget.message and result.usage.requests == 1


def test_a_cost_budget_needs_prices(tmp_path):
    with pytest.raises(UsageError, match=r"budget\.cost needs model\.prices"):
        make(tmp_path, [], budget={"thread": {"cost": 1}})
    with pytest.raises(UsageError, match=r"budget\.run\.requests"):
        make(tmp_path, [], budget={"run": {"requests": 0}})


def test_the_notice_at_80_percent_comes_once(tmp_path):
    s, rt = make(tmp_path, writes(9), budget={"run": {"requests": 10}})
    prompt(s, "r1")
    notices = [e for e in events_of(rt, "r1") if e["type"] == "notice"]
    assert len(notices) == 1 and notices[0]["code"] == "budget"
    assert notices[0]["budget"] == {"scope": "run", "limit": "requests", "max": 10, "used": 8,
                                    "message": notices[0]["message"]}
    assert "80 % of the run's budget of model requests is used (8 of 10)" in notices[0]["message"]


def test_a_thread_budget_spans_runs_and_raising_it_lets_the_thread_go_on(tmp_path):
    s, rt = make(tmp_path, writes(2) + writes(1), budget={"thread": {"requests": 4}})
    assert prompt(s, "r1").stop_reason == "stop"  # 3 requests
    second = prompt(s, "r2")
    assert second.stop_reason == "budget" and second.budget.scope == "thread"
    assert second.usage.requests == 1
    notices = [e for m in ("r1", "r2") for e in events_of(rt, m) if e["type"] == "notice"]
    assert len(notices) == 1  # 3 of 4 is past 80 %: told once, in the first run
    history = s.conversations.store.current.history
    assert isinstance(history[-1], ToolResult)  # consistent: the call has its result
    bad = json.loads(s.usage('{"op": "setBudget", "budget": {"thread": {"requests": -1}}}'))
    assert bad["ok"] is False and bad["code"] == "EINVAL" and "thread.requests" in bad["message"]
    raised = json.loads(s.usage('{"op": "setBudget", "budget": {"thread": {"requests": 10}}}'))
    assert raised["value"]["budget"] == {"thread": {"requests": 10}}
    third = prompt(s, "r3")
    assert third.stop_reason == "stop" and third.text == "all done"
    assert isinstance(history[-2], UserMessage) and history[-1].text == "all done"


def test_a_harness_budget_counts_every_thread(tmp_path):
    s, _ = make(tmp_path, writes(1) + writes(1), budget={"harness": {"toolCalls": 1}})
    assert prompt(s, "r1").stop_reason == "stop"
    json.loads(s.threads('{"op": "create"}'))
    result = prompt(s, "r2")
    assert result.stop_reason == "budget" and result.budget.scope == "harness"
    assert json.loads(s.usage('{"op": "usage"}'))["value"]["harness"]["toolCalls"] == 1


# -- wall time ----------------------------------------------------------------------------

def test_a_tool_call_that_would_pass_the_time_limit_is_cut_at_it(tmp_path):
    model = ScriptedModel([ScriptedTurn(tool_calls=[{"name": "slow", "arguments":
                                                     {"seconds": 30}}]),
                           ScriptedTurn(text="never")])
    agent = Agent(model, ToolSet([Slow()]), ToolContext(Workspace(tmp_path / "ws")))
    meter = Meter([Scope("run", Tally(), lambda: BudgetLimits(time_ms=200), "run:r1")], None)
    history, events = [], []
    result = asyncio.run(agent.run("go", RunContext("r1", history, meter=meter), events.append))
    assert result.stop_reason == "budget" and result.budget.limit == "timeMs"
    assert 200 <= result.usage.time_ms < 30_000
    assert isinstance(history[-1], ToolResult) and history[-1].output == INTERRUPTED
    assert len(model.requests) == 1


def test_a_time_limit_already_spent_stops_before_the_first_request(tmp_path):
    spent = Tally(time_ms=1000)
    s, _ = make(tmp_path, writes(1), budget={"thread": {"timeMs": 1000}})
    s.conversations.store.current.usage = spent
    result = prompt(s, "r1")
    assert result.stop_reason == "budget" and result.budget.limit == "timeMs"
    assert len(s.agent.model.requests) == 0 and result.usage.requests == 0
