"""The agent loop with the scripted model, on CPython over a real directory."""

import asyncio
import json

from slow_tool import Slow

from harness.agent import INTERRUPTED, Agent, RunContext
from harness.events import event_adapter, to_json
from harness.messages import AssistantMessage, ToolResult, UserMessage
from harness.models.scripted import ScriptedModel, ScriptedTurn
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.tools.reads import Reads
from harness.workspace.jail import Workspace


def turn(text="", calls=(), delay_ms=0):
    return ScriptedTurn(text=text, tool_calls=[{"name": n, "arguments": a} for n, a in calls],
                        delay_ms=delay_ms)


def make_agent(tmp_path, turns, tools=None, max_steps=50):
    ws = Workspace(tmp_path / "ws")
    model = ScriptedModel(turns)
    agent = Agent(model, ToolSet(tools if tools is not None else builtin_tools()),
                  ToolContext(ws), max_steps)
    return agent, model, ws


def run(agent, prompt="go", run_id="r1", history=None):
    """One run; ``history``: the conversation it continues (a new one if None)."""
    events = []
    context = RunContext(run_id, [] if history is None else history, "system")
    result = asyncio.run(agent.run(prompt, context, events.append))
    return result, events


def types(events):
    return [e.type for e in events]


def test_final_answer_streams_text(tmp_path):
    agent, _, _ = make_agent(tmp_path, [turn("Hello there, friend.")])
    result, events = run(agent)
    assert result.text == "Hello there, friend." and result.stop_reason == "stop"
    assert types(events)[:2] == ["run_start", "turn_start"]
    assert types(events)[-2:] == ["turn_end", "run_end"]
    deltas = [e.delta for e in events if e.type == "text_delta"]
    assert len(deltas) > 1 and "".join(deltas) == "Hello there, friend."
    assert [e.seq for e in events] == list(range(len(events)))
    assert {e.run_id for e in events} == {"r1"}


def test_tool_calls_run_and_results_feed_back(tmp_path):
    agent, model, _ = make_agent(tmp_path, [
        turn("Writing.", [("write", {"path": "notes/a.txt", "content": "hi\n"})]),
        turn("", [("read", {"path": "notes/a.txt"})]),
        turn("Done."),
    ])
    result, events = run(agent)
    assert result.text == "Done."
    assert (tmp_path / "ws" / "notes" / "a.txt").read_text() == "hi\n"
    ends = [e for e in events if e.type == "tool_end"]
    assert [e.name for e in ends] == ["write", "read"]
    assert not any(e.is_error for e in ends)
    assert "hi" in ends[1].output
    starts = [e for e in events if e.type == "tool_start"]
    assert starts[0].arguments == {"path": "notes/a.txt", "content": "hi\n"}
    # The third model request saw the whole history, tool results included.
    last = model.requests[-1].messages
    assert [m.role for m in last] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [t.name for t in model.requests[0].tools] == ["read", "write", "edit", "ls", "grep",
                                                         "find"]


def test_invalid_arguments_become_error_results(tmp_path):
    agent, _, _ = make_agent(tmp_path, [
        turn("", [("read", {"path": 3}), ("write", "{not json"), ("nope", {}),
                  ("read", {"path": "/etc/passwd"})]),
        turn("Sorry."),
    ])
    result, events = run(agent)
    assert result.stop_reason == "stop"
    ends = [e for e in events if e.type == "tool_end"]
    assert all(e.is_error for e in ends)
    assert "Invalid arguments for tool 'read'" in ends[0].output
    assert "not valid JSON" in ends[1].output
    assert "Unknown tool 'nope'" in ends[2].output
    assert "EACCES" in ends[3].output
    tool_start = [e for e in events if e.type == "tool_start"]
    assert tool_start[1].arguments == {}  # unparseable arguments are shown as {}


def test_max_steps(tmp_path):
    agent, _, _ = make_agent(tmp_path, [turn("", [("ls", {})])] * 5, max_steps=2)
    result, events = run(agent)
    assert result.stop_reason == "max_steps"
    assert types(events).count("turn_start") == 2


def test_model_failure_is_an_error_event_then_run_end(tmp_path):
    agent, _, _ = make_agent(tmp_path, [])
    result, events = run(agent)
    assert result.stop_reason == "error"
    assert types(events)[-2:] == ["error", "run_end"]
    assert events[-2].code == "script_exhausted"
    assert "model.turns" in events[-2].message


def test_history_is_kept_across_runs(tmp_path):
    agent, model, _ = make_agent(tmp_path, [turn("One."), turn("Two.")])
    history = []
    run(agent, "first", "a", history)
    result, events = run(agent, "second", "b", history)
    assert result.text == "Two."
    assert events[0].seq == 0 and events[0].run_id == "b"
    assert [m.role for m in model.requests[1].messages] == ["user", "assistant", "user"]


def test_each_run_is_given_its_context_and_the_agent_keeps_none(tmp_path):
    """The history, system prompt and read tracking come with the run (RunContext): a
    run grows the history it was given, and the next run with another context sees
    nothing of it."""
    write = ("write", {"path": "a.txt", "content": "new"})
    agent, model, _ = make_agent(tmp_path, [turn("", [write]), turn("One."),
                                            turn("", [write]), turn("Two.")])
    (tmp_path / "ws" / "a.txt").write_text("old")
    first, second = [], []
    events = []
    asyncio.run(agent.run("go", RunContext("r1", first, "one", reads=Reads()), events.append))
    refused = next(e for e in events if e.type == "tool_end")
    assert refused.is_error and "you have not read it" in refused.output  # the run's reads
    assert (tmp_path / "ws" / "a.txt").read_text() == "old"
    assert [m.role for m in first] == ["user", "assistant", "tool", "assistant"]
    run(agent, "again", "r2", second)  # no reads given: the tool context's (unchecked)
    assert (tmp_path / "ws" / "a.txt").read_text() == "new"
    assert [r.system for r in model.requests] == ["one", "one", "system", "system"]
    assert [m.role for m in model.requests[2].messages] == ["user"]
    assert len(first) == 4 and len(second) == 4
    assert not hasattr(agent, "history") and agent.context.reads is None


def test_cancel_mid_stream_keeps_partial_text_and_next_prompt_works(tmp_path):
    agent, _, _ = make_agent(tmp_path, [turn("a b c d e f g h i j", delay_ms=20),
                                        turn("Again.")])
    events = []
    history = []

    async def go():
        task = asyncio.ensure_future(agent.run("go", RunContext("r1", history), events.append))
        while sum(e.type == "text_delta" for e in events) < 2:
            await asyncio.sleep(0.005)
        task.cancel()
        return await task

    result = asyncio.run(go())
    assert result.stop_reason == "aborted"
    assert events[-1].type == "run_end" and events[-1].stop_reason == "aborted"
    partial = "".join(e.delta for e in events if e.type == "text_delta")
    assert result.text == partial and 0 < len(partial) < len("a b c d e f g h i j")
    assert history[-1] == AssistantMessage(text=partial)
    result2, _ = run(agent, "again", "r2", history)
    assert result2.text == "Again."



def test_cancel_during_tools_answers_every_call(tmp_path):
    agent, _, _ = make_agent(tmp_path, [
        turn("", [("slow", {"seconds": 0}), ("slow", {"seconds": 10}), ("slow", {"seconds": 0})]),
    ], tools=[Slow()])
    events = []
    history = []

    async def go():
        task = asyncio.ensure_future(agent.run("go", RunContext("r1", history), events.append))
        while sum(e.type == "tool_start" for e in events) < 2:
            await asyncio.sleep(0.005)
        task.cancel()
        return await task

    result = asyncio.run(go())
    assert result.stop_reason == "aborted"
    results = [m for m in history if isinstance(m, ToolResult)]
    assert [r.output for r in results] == ["slept", INTERRUPTED, INTERRUPTED]
    assert isinstance(history[0], UserMessage)


def test_events_serialize_camel_case_and_round_trip(tmp_path):
    agent, _, _ = make_agent(tmp_path, [turn("", [("ls", {})]), turn("ok")])
    _, events = run(agent)
    for event in events:
        wire = json.loads(to_json(event))
        assert "runId" in wire and "run_id" not in wire
        assert event_adapter().validate_python(wire) == event
    end = json.loads(to_json(next(e for e in events if e.type == "tool_end")))
    assert set(end) == {"runId", "seq", "type", "callId", "name", "output", "isError"}
