"""Budgets in real Chromium against the scripted provider server (real OpenAI wire
format on loopback): a model that keeps calling tools is stopped at each limit before
the server sees a request past it; a thread over its budget goes on once the page raises
it; the 80 % notice comes once. The page side is e2e/pages/rows/budget.mjs."""

import pytest

from e2e.conftest import call

PRICES = {"input": 1, "output": 2}  # USD per million: 1000 in + 100 out = 0.0012 a request


def model(provider):
    return {"api": "openai-chat", "baseUrl": provider.base_url, "apiKey": "sk-test",
            "model": "gpt-test", "prices": PRICES}


def writes(n):
    """n replies that each write a file w<i>.txt, with the same usage."""
    return [{"text": f"step {i}", "usage": [1000, 100],
             "toolCalls": [["write", {"path": f"w{i}.txt", "content": str(i)}]]}
            for i in range(n)]


def posts(provider):
    return [r for r in provider.requests if r.method == "POST"]


def end(run):
    return run["events"][-1]


def test_each_limit_stops_the_run_before_the_server_sees_more(app, provider):
    provider.script(writes(40))
    budgets = [{"requests": 3}, {"toolCalls": 2}, {"tokens": 5000}, {"cost": 0.003}]
    r = call(app, "budget.eachLimit", model(provider), budgets)
    runs = r["runs"]
    for run, budget in zip(runs, budgets, strict=True):
        done = run["done"]
        assert done["stopReason"] == "budget", (budget, done)
        assert done["budget"] == end(run)["budget"]
        assert done["budget"]["limit"] == next(iter(budget)) and done["text"].startswith(
            "step ")  # the partial answer is kept
    # what the harness counted is what the server saw: no request past a limit
    counted = [run["done"]["usage"]["requests"] for run in runs]
    assert sum(counted) == len(posts(provider)) == r["usage"]["harness"]["requests"]
    assert counted[0] == 3
    tools = [e for e in runs[1]["events"] if e["type"] == "tool_end"]
    assert [e["isError"] for e in tools] == [False, False, True]
    assert tools[-1]["output"].startswith("Not run: stopped by the run's budget of tool calls")
    assert runs[1]["done"]["usage"]["toolCalls"] == 2
    # the token and cost runs: every request's input and answer fit in what was left
    start = counted[0] + counted[1]
    tokens = posts(provider)[start:start + counted[2]]
    assert tokens and all(1100 * i + 1000 + p.body["max_tokens"] <= 5000
                          for i, p in enumerate(tokens))
    assert runs[2]["done"]["usage"]["inputTokens"] + runs[2]["done"]["usage"]["outputTokens"] \
        <= 5000
    cost = runs[3]["done"]["usage"]["cost"]
    assert 0 < cost <= 0.003 and counted[3] == 2  # a third would pass 0.003
    assert r["usage"]["harness"]["cost"] == pytest.approx(
        sum(run["done"]["usage"]["cost"] for run in runs))
    # the files of every run that ran (each write ran once), none of the refused ones
    written = sum(run["done"]["usage"]["toolCalls"] for run in runs)
    assert len([f for f in r["files"] if f.startswith("w")]) == written


def test_a_thread_over_budget_goes_on_once_the_page_raises_it(app, provider):
    provider.script([*writes(4), {"text": "finished", "usage": [1000, 100]}])
    r = call(app, "budget.threadBudget", model(provider), {"thread": {"requests": 4}})
    assert r["first"]["done"]["stopReason"] == "budget"
    assert r["first"]["done"]["usage"]["requests"] == 4
    notices = [e for run in ("first", "second") for e in r[run]["events"]
               if e["type"] == "notice"]
    assert len(notices) == 1 and notices[0]["budget"]["scope"] == "thread"
    assert notices[0]["budget"]["used"] == 4
    assert "100 % of the thread's budget of model requests is used" in notices[0]["message"]
    second = r["second"]["done"]
    assert second["stopReason"] == "budget" and second["usage"]["requests"] == 0
    assert r["second"]["events"][-1]["budget"]["scope"] == "thread"
    assert r["before"]["thread"]["requests"] == 4 and len(posts(provider)) == 5  # 4, then 1
    assert r["bad"]["ok"] is False and r["bad"]["code"] == "EINVAL"
    assert "thread.requests" in r["bad"]["message"]
    assert r["raised"]["budget"] == {"thread": {"requests": 100}}
    assert r["third"]["done"]["stopReason"] == "stop" and r["third"]["done"]["text"] == "finished"
    # the thread was left consistent: every call answered, then both prompts
    last = posts(provider)[-1].body["messages"]
    assert [m["role"] for m in last[-4:]] == ["assistant", "tool", "user", "user"]
    assert last[-4]["tool_calls"][0]["id"] == last[-3]["tool_call_id"]
    assert r["threads"]["threads"][0]["usage"]["requests"] == 5
