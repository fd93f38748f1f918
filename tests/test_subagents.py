"""Subagents (harness/subagents.py) through the session with the scripted model: the
``task`` tool runs a subagent with a fresh conversation over the same workspace; several
run at once; their events are nested; limits of depth, concurrency and budget hold;
cancelling the parent cancels them; reverting the parent takes back their files."""

import asyncio
import json

from harness.messages import ToolResult
from harness.runtime.native import NativeRuntime
from harness.session import Session


def task(prompt, **more):
    return {"name": "task", "arguments": {"prompt": prompt, **more}}


def write(path, content="x"):
    return {"name": "write", "arguments": {"path": path, "content": content}}


def make(tmp_path, turns, subagents=True, **options):
    runtime = NativeRuntime(str(tmp_path / "ws"), threads=str(tmp_path / "state" / "threads"))
    config = {"model": {"api": "scripted", "turns": turns}, "subagents": subagents, **options}
    return Session.from_options(json.dumps(config), runtime), runtime


def prompt(session, run_id="r1"):
    async def go():
        return await session.prompt(run_id, "go")
    return asyncio.run(go())


def of(runtime, run_id):
    """A run's own events (not the file_change events of its calls, numbered apart)."""
    return [m for m in runtime.messages if m.get("runId") == run_id
            and m["type"] != "file_change"]


TWO = [
    {"text": "Delegating.", "toolCalls": [task("write a.txt"), task("write b.txt")]},
    {"toolCalls": [write("a.txt", "A")]},  # the subagents' first requests, in turn
    {"toolCalls": [write("b.txt", "B")]},
    {"text": "wrote one"},
    {"text": "wrote the other"},
    {"text": "Both done."},
]


def test_two_subagents_run_at_once_and_their_events_are_nested(tmp_path):
    s, rt = make(tmp_path, TWO)
    result = prompt(s)
    assert result.stop_reason == "stop" and result.text == "Both done."
    assert (tmp_path / "ws" / "a.txt").read_text() + (tmp_path / "ws" / "b.txt").read_text() \
        in ("AB", "BA")
    calls = [e["callId"] for e in of(rt, "r1") if e["type"] == "tool_start"]
    subs = [f"r1/{c}" for c in calls]
    for sub, call in zip(subs, calls, strict=True):
        events = of(rt, sub)
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert {(e["parentRunId"], e["parentCallId"], e["depth"]) for e in events} == {
            ("r1", call, 1)}
        assert events[0]["type"] == "run_start" and events[-1]["type"] == "run_end"
    order = [(m["runId"], m["type"]) for m in rt.messages if m.get("type") in ("run_start",
                                                                               "run_end")]
    assert order.index((subs[1], "run_start")) < order.index((subs[0], "run_end"))  # at once
    results = [m for m in s.conversations.store.current.history if isinstance(m, ToolResult)]
    assert [r.call_id for r in results] == calls  # in the calls' order
    assert {r.output for r in results} == {"wrote one", "wrote the other"}
    end = of(rt, "r1")[-1]
    assert end["usage"]["requests"] == 6  # the subagents' requests count in the parent's
    assert "parentRunId" not in end


def test_at_most_max_concurrent_at_a_time(tmp_path):
    s, rt = make(tmp_path, TWO, {"maxConcurrent": 1})
    prompt(s)
    calls = [e["callId"] for e in of(rt, "r1") if e["type"] == "tool_start"]
    order = [(m["runId"], m["type"]) for m in rt.messages if m.get("type") in ("run_start",
                                                                               "run_end")]
    first, second = (f"r1/{c}" for c in calls)
    assert order.index((first, "run_end")) < order.index((second, "run_start"))


def test_depth_is_limited(tmp_path):
    turns = [{"toolCalls": [task("go deeper")]}, {"toolCalls": [task("deeper still")]},
             {"text": "could not"}, {"text": "parent done"}]
    s, rt = make(tmp_path, turns, {"maxDepth": 1})
    prompt(s)
    requests = list(s.agent.model.requests)
    assert "task" in [t.name for t in requests[0].tools]
    assert "task" not in [t.name for t in requests[1].tools]  # the subagent, at the limit
    inner = [e for e in rt.messages if e.get("depth") == 1 and e["type"] == "tool_end"]
    assert inner[0]["isError"] and "Unknown tool 'task'" in inner[0]["output"]


def test_a_subagent_over_its_own_budget_is_an_error_result_and_the_parent_goes_on(tmp_path):
    turns = [{"toolCalls": [task("loop", budget={"requests": 2})]},
             {"text": "one", "toolCalls": [write("x.txt")]},
             {"text": "two", "toolCalls": [write("y.txt")]},
             {"text": "The subagent ran out; I will finish myself."}]
    s, rt = make(tmp_path, turns, {"budget": {"requests": 5}})
    result = prompt(s)
    assert result.stop_reason == "stop" and result.text.startswith("The subagent ran out")
    end = next(e for e in of(rt, "r1") if e["type"] == "tool_end")
    assert end["isError"] and "stopped before it finished" in end["output"]
    assert "the run's budget of model requests: 2 of 2" in end["output"]
    sub = next(e for e in rt.messages if e.get("depth") == 1 and e["type"] == "run_end")
    assert sub["stopReason"] == "budget"


def test_cancelling_the_parent_cancels_its_subagents(tmp_path):
    turns = [{"toolCalls": [task("slow")]},
             {"text": "a b c d e f g h i j k l m n o p", "delayMs": 50}]
    s, rt = make(tmp_path, turns)

    async def go():
        run = s.prompt("r1", "go")
        while not any(e.get("depth") == 1 and e["type"] == "text_delta" for e in rt.messages):
            await asyncio.sleep(0.01)
        s.cancel()
        return await run

    result = asyncio.run(go())
    assert result.stop_reason == "aborted"
    sub = [e for e in rt.messages if e.get("depth") == 1 and e["type"] == "run_end"]
    assert sub and sub[0]["stopReason"] == "aborted"
    history = s.conversations.store.current.history
    assert isinstance(history[-1], ToolResult) and history[-1].is_error  # interrupted


def test_reverting_the_parent_takes_back_its_subagents_files(tmp_path):
    s, _ = make(tmp_path, TWO)
    prompt(s)
    diff = json.loads(s.checkpoint('{"op": "diff", "runId": "r1"}'))
    assert sorted(d["path"] for d in diff["value"]) == ["/work/a.txt", "/work/b.txt"]
    reply = json.loads(s.checkpoint('{"op": "revert", "runId": "r1"}'))
    assert reply["ok"], reply
    assert not (tmp_path / "ws" / "a.txt").exists() and not (tmp_path / "ws" / "b.txt").exists()


def test_the_task_tool_is_off_by_default_and_a_read_only_subagent_cannot_write(tmp_path):
    s, _ = make(tmp_path, [{"text": "hi"}], subagents=False)
    assert "task" not in s.agent.tools.names()
    turns = [{"toolCalls": [task("look", read_only=True)]},
             {"toolCalls": [write("z.txt")]}, {"text": "could not write"}, {"text": "ok"}]
    s, _rt = make(tmp_path / "b", turns)
    prompt(s)
    assert not (tmp_path / "b" / "ws" / "z.txt").exists()
    assert sorted(t.name for t in s.agent.model.requests[1].tools) == [
        "find", "grep", "ls", "read"]


class Deny:
    """The page's onApproval: records each request, denies it."""

    def __init__(self):
        self.asked = []

    async def ask(self, request_json):
        self.asked.append(json.loads(request_json))
        return "deny", "not in a subagent"


def test_permission_rules_and_approvals_apply_inside_a_subagent(tmp_path):
    turns = [{"toolCalls": [task("write it")]}, {"toolCalls": [write("c.txt")]},
             {"text": "it was denied"}, {"text": "ok"}]
    approver = Deny()
    runtime = NativeRuntime(str(tmp_path / "ws"), approvals=approver)
    config = {"model": {"api": "scripted", "turns": turns}, "subagents": True,
              "permissions": {"write": "ask"}}
    s = Session.from_options(json.dumps(config), runtime)
    prompt(s)
    assert not (tmp_path / "ws" / "c.txt").exists()
    assert len(approver.asked) == 1 and approver.asked[0]["runId"].startswith("r1/")
    request = next(m for m in runtime.messages if m["type"] == "approval_request")
    assert request["depth"] == 1 and request["runId"] == approver.asked[0]["runId"]


def test_bad_task_arguments_are_error_results_and_the_parent_goes_on(tmp_path):
    turns = [{"toolCalls": [task("priced", budget={"cost": 1}),
                            task("named", tools=["x" * 65]),
                            task("named", tools=["nope"])]},
             {"text": "I will do it myself."}]
    s, rt = make(tmp_path, turns)
    result = prompt(s)
    assert result.stop_reason == "stop" and result.text == "I will do it myself."
    ends = [e for e in of(rt, "r1") if e["type"] == "tool_end"]
    assert all(e["isError"] for e in ends)
    assert "The task was not run: budget.cost needs model.prices" in ends[0]["output"]
    assert "at most 64 characters" in ends[1]["output"]
    assert "no such tool for a subagent here: ['nope']" in ends[2]["output"]
    assert len(s.agent.model.requests) == 2  # no subagent ran


def checkpoint(session, op, run_id=None, **more):
    request = {"op": op, **({} if run_id is None else {"runId": run_id}), **more}
    return json.loads(session.checkpoint(json.dumps(request)))


def subagent_ids(runtime):
    return [f"r1/{e['callId']}" for e in of(runtime, "r1")
            if e["type"] == "tool_start" and e["name"] == "task"]


def test_each_subagent_has_its_own_checkpoint_within_the_parent_run(tmp_path):
    turns = [*TWO[:-1], {"toolCalls": [write("c.txt", "C")]}, {"text": "Both done."}]
    s, rt = make(tmp_path, turns)
    prompt(s)
    ws = tmp_path / "ws"
    first, second = subagent_ids(rt)
    listing = {c["runId"]: c for c in checkpoint(s, "list")["value"]}
    assert listing[first]["parentRunId"] == listing[second]["parentRunId"] == "r1"
    assert listing["r1"]["parentRunId"] is None and listing["r1"]["paths"] == 3
    mine = {d["path"] for d in checkpoint(s, "diff", first)["value"]}
    other = {d["path"] for d in checkpoint(s, "diff", second)["value"]}
    assert {len(mine), len(other)} == {1} and mine | other == {"/work/a.txt", "/work/b.txt"}
    kept = other.pop().removeprefix("/work/")
    reply = checkpoint(s, "revert", first)  # one subagent alone
    assert reply["ok"], reply
    assert reply["value"]["reverted"] == [first]
    assert sorted(p.name for p in ws.iterdir()) == sorted([kept, "c.txt"])
    redo = checkpoint(s, "revert", reply["value"]["revertId"])
    assert redo["ok"] and sorted(p.name for p in ws.iterdir()) == ["a.txt", "b.txt", "c.txt"]


def test_a_subagents_file_the_parent_changed_after_it_is_a_conflict(tmp_path):
    turns = [{"toolCalls": [task("write a")]}, {"toolCalls": [write("a.txt", "sub")]},
             {"text": "wrote a"}, {"toolCalls": [write("a.txt", "parent")]}, {"text": "ok"}]
    s, rt = make(tmp_path, turns, readBeforeWrite=False)
    prompt(s)
    (sub,) = subagent_ids(rt)
    refused = checkpoint(s, "revert", sub, cascade=True)  # the parent is never cascaded
    assert refused["code"] == "ECONFLICT" and "a.txt" in refused["message"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "parent"
    forced = checkpoint(s, "revert", sub, force=True)
    assert forced["ok"] and not (tmp_path / "ws" / "a.txt").exists()


def test_reverting_the_parent_takes_its_subagents_checkpoints_with_it(tmp_path):
    s, rt = make(tmp_path, TWO)
    prompt(s)
    subs = subagent_ids(rt)
    reply = checkpoint(s, "revert", "r1")
    assert reply["ok"] and reply["value"]["reverted"] == ["r1"]
    undo = reply["value"]["revertId"]
    listing = {c["runId"]: c for c in checkpoint(s, "list")["value"]}
    assert {listing[r]["revertedBy"] for r in ["r1", *subs]} == {undo}
    again = checkpoint(s, "revert", subs[0])
    assert again["code"] == "EINVAL" and "reverted already" in again["message"]
    assert checkpoint(s, "revert", undo)["ok"]  # the redo brings the subagents' back too
    listing = {c["runId"]: c for c in checkpoint(s, "list")["value"]}
    assert {listing[r]["revertedBy"] for r in ["r1", *subs]} == {None}
    assert checkpoint(s, "revert", subs[1])["ok"]


def test_a_nested_subagents_changes_are_in_its_parent_subagents_checkpoint(tmp_path):
    turns = [{"toolCalls": [task("delegate further")]},
             {"toolCalls": [write("outer.txt"), task("write inner")]},
             {"toolCalls": [write("inner.txt")]}, {"text": "inner done"},
             {"text": "outer done"}, {"text": "all done"}]
    s, _rt = make(tmp_path, turns)
    prompt(s)
    listing = checkpoint(s, "list")["value"]
    by_depth = sorted(listing, key=lambda c: c["runId"].count("/"))
    paths = [sorted(d["path"] for d in checkpoint(s, "diff", c["runId"])["value"])
             for c in by_depth]
    assert paths == [["/work/inner.txt", "/work/outer.txt"]] * 2 + [["/work/inner.txt"]]
    assert by_depth[2]["parentRunId"] == "r1"  # the top run's id: the one it ran in
