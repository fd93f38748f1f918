"""Subagents in real Chromium: the model delegates with the task tool (scripted); the
page sees each subagent's events nested in the run (parentRunId, parentCallId, depth),
in order; two run at once and write different files; each has a checkpoint of its own
(one reverted alone); the parent's diff and revert cover them; depth, concurrency and a subagent's own budget hold (its parent gets an error
result and goes on); cancelling the parent cancels its subagent. The page side is
e2e/pages/rows/subagents.mjs."""

from e2e.conftest import call


def task(prompt, **more):
    return {"name": "task", "arguments": {"prompt": prompt, **more}}


def write(path, content):
    return {"name": "write", "arguments": {"path": path, "content": content}}


def own(events, run_id):
    return [e for e in events if e["runId"] == run_id]


TWO = [
    {"text": "Delegating.", "toolCalls": [task("write a.txt"), task("write b.txt")]},
    {"toolCalls": [write("a.txt", "A")]},
    {"toolCalls": [write("b.txt", "B")]},
    {"text": "wrote one"},
    {"text": "wrote the other"},
    {"text": "Both done."},
]


def test_two_subagents_at_once_nested_in_order_and_reverted_with_their_parent(app):
    r = call(app, "subagents.twoAtOnce", TWO)
    assert r["done"]["stopReason"] == "stop" and r["done"]["text"] == "Both done."
    events = r["events"]
    root = events[0]["runId"]
    calls = [e["callId"] for e in own(events, root) if e["type"] == "tool_start"]
    for call_id in calls:
        sub = own(events, f"{root}/{call_id}")
        assert sub[0]["type"] == "run_start" and sub[-1]["type"] == "run_end"
        assert [e["seq"] for e in sub] == list(range(len(sub)))
        assert {(e["parentRunId"], e["parentCallId"], e["depth"]) for e in sub} == {
            (root, call_id, 1)}
        assert sub[-1]["stopReason"] == "stop"
    bounds = [(e["runId"], e["type"]) for e in events if e["type"] in ("run_start", "run_end")]
    first, second = (f"{root}/{c}" for c in calls)
    assert bounds.index((second, "run_start")) < bounds.index((first, "run_end"))  # at once
    assert [e["seq"] for e in own(events, root)] == list(range(len(own(events, root))))
    ends = [e for e in own(events, root) if e["type"] == "tool_end"]
    assert [e["callId"] for e in ends] == calls and not any(e["isError"] for e in ends)
    assert r["done"]["usage"]["requests"] == 6
    assert r["files"] == ["a.txt", "b.txt"]
    assert r["diff"] == ["/work/a.txt", "/work/b.txt"]  # the parent's diff covers them
    # one subagent's own checkpoint, reverted alone (then redone)
    assert sorted(r["subs"]) == sorted([first, second])
    assert len(r["subDiff"]) == 1 and r["alone"] == [r["subs"][0]]
    assert r["afterOne"] == sorted({"a.txt", "b.txt"} - {r["subDiff"][0].removeprefix("/work/")})
    assert r["reverted"] == [root]
    assert r["after"] == []  # and the parent's revert takes them back
    assert len(set(r["left"])) == 1 and r["left"][0] is not None  # the subagents' with it
    assert r["told"] >= len(events)  # h.subscribe got them too


LIMITS = [
    {"toolCalls": [task("write a.txt"), task("go deeper")]},
    {"toolCalls": [write("a.txt", "A")]},  # subagent 1 (one at a time)
    {"text": "a done"},
    {"toolCalls": [task("deeper still")]},  # subagent 2: no task tool at depth 1
    {"text": "then I write", "toolCalls": [write("b.txt", "B")]},
    {"text": "Subagent 2 ran out; done anyway."},  # the parent goes on
    # the cancelled run
    {"toolCalls": [task("something slow")]},
    {"text": "one two three four five six seven eight nine ten eleven twelve", "delayMs": 150},
    {"text": "after the cancel"},
]


def test_depth_concurrency_and_budget_limits_then_a_cancel(app):
    r = call(app, "subagents.limitsAndCancel", LIMITS)
    limited = r["limited"]
    assert limited["done"]["stopReason"] == "stop"
    assert limited["done"]["text"] == "Subagent 2 ran out; done anyway."
    events = limited["events"]
    root = events[0]["runId"]
    calls = [e["callId"] for e in own(events, root) if e["type"] == "tool_start"]
    first, second = (f"{root}/{c}" for c in calls)
    bounds = [(e["runId"], e["type"]) for e in events if e["type"] in ("run_start", "run_end")]
    assert bounds.index((first, "run_end")) < bounds.index((second, "run_start"))  # one at a time
    inner = [e for e in own(events, second) if e["type"] == "tool_end"]
    assert inner[0]["isError"] and "Unknown tool 'task'" in inner[0]["output"]  # depth
    assert own(events, second)[-1]["stopReason"] == "budget"
    ends = [e for e in own(events, root) if e["type"] == "tool_end"]
    assert not ends[0]["isError"] and ends[0]["output"] == "a done"
    assert ends[1]["isError"] and "stopped before it finished" in ends[1]["output"]
    cancelled = r["cancelled"]
    assert cancelled["done"]["stopReason"] == "aborted"
    nested_ends = [e for e in cancelled["events"] if e["type"] == "run_end" and e.get("depth")]
    assert nested_ends and nested_ends[0]["stopReason"] == "aborted"
    assert r["after"]["stopReason"] == "stop" and r["after"]["text"] == "after the cancel"
