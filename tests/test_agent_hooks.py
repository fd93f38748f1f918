"""The agent's tool-call hooks (harness/agent.py ToolHooks): order, what they see, and
a hook that raises becoming the call's error result rather than a crashed run."""

import asyncio
import contextlib

from harness.agent import Agent, CallInfo, RunContext, ToolHooks
from harness.messages import ToolResult
from harness.models.scripted import ScriptedModel, ScriptedTurn
from harness.policy.enforce import CURRENT_CALL
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolOutcome, ToolSet
from harness.workspace.jail import Workspace


def write_then_answer():
    return [ScriptedTurn(text="", tool_calls=[
                {"name": "write", "arguments": {"path": "a.txt", "content": "hi"}}]),
            ScriptedTurn(text="done")]


def agent_with(tmp_path, hooks, turns=None):
    ws = Workspace(tmp_path / "ws")
    agent = Agent(ScriptedModel(turns or write_then_answer()), ToolSet(builtin_tools()),
                  ToolContext(ws), hooks=hooks)
    return agent, ws


def run(agent, history=None):
    """One run; ``history``: the conversation it grows (a new one if None)."""
    events = []
    context = RunContext("r1", [] if history is None else history)
    result = asyncio.run(agent.run("go", context, events.append))
    return result, events


def tool_results(history):
    return [m for m in history if isinstance(m, ToolResult)]


def recording(log, name):
    @contextlib.contextmanager
    def around(info: CallInfo):
        log.append(f"{name}:enter:{info.call.name}")
        yield
        log.append(f"{name}:exit")

    async def check(tool, params):
        log.append(f"{name}:gate:{params.path}")

    def after(info: CallInfo, outcome: ToolOutcome | None):
        log.append(f"{name}:after:{outcome.output if outcome else None}")

    return ToolHooks(around=around, gate=lambda info: check, after=after)


def test_hooks_compose_in_order_and_after_sees_the_result(tmp_path):
    log: list[str] = []
    agent, _ = agent_with(tmp_path, [recording(log, "one"), recording(log, "two")])
    history = []
    result, _ = run(agent, history)
    assert result.stop_reason == "stop"
    assert (tmp_path / "ws" / "a.txt").read_text() == "hi"
    output = tool_results(history)[0].output
    assert log == ["one:enter:write", "two:enter:write", "one:gate:a.txt", "two:gate:a.txt",
                   "two:exit", "one:exit", f"one:after:{output}", f"two:after:{output}"]


def test_the_first_refusing_gate_is_the_result_and_the_tool_does_not_run(tmp_path):
    asked: list[str] = []

    async def refuse(tool, params):
        asked.append("refuse")
        return "Refused by the test."

    async def never(tool, params):
        asked.append("never")

    agent, _ = agent_with(tmp_path, [ToolHooks(gate=lambda i: refuse),
                                     ToolHooks(gate=lambda i: never)])
    result, events = run(agent)
    assert result.stop_reason == "stop" and asked == ["refuse"]
    assert not (tmp_path / "ws" / "a.txt").exists()
    end = next(e for e in events if e.type == "tool_end")
    assert end.is_error and end.output == "Refused by the test."


def test_the_call_scope_is_set_while_hooks_and_tool_run(tmp_path):
    seen = []

    @contextlib.contextmanager
    def around(info):
        seen.append(CURRENT_CALL.get().call_id == info.call.id)
        yield

    agent, _ = agent_with(tmp_path, [ToolHooks(around=around)])
    run(agent)
    assert seen == [True] and CURRENT_CALL.get() is None


def raising(part):
    def boom(*args):
        raise RuntimeError(f"{part} broke")

    async def gate_boom(tool, params):
        raise RuntimeError("gate broke")

    if part == "gate":
        return ToolHooks(gate=lambda info: gate_boom)
    return ToolHooks(**{part: boom})


def test_a_hook_that_raises_is_an_error_result_never_a_crashed_run(tmp_path):
    for part, ran in [("around", False), ("gate", False), ("after", True)]:
        after: list[ToolOutcome | None] = []
        base = tmp_path / part
        agent, _ = agent_with(base, [raising(part),
                                     ToolHooks(after=lambda i, o, told=after: told.append(o))])
        result, events = run(agent)
        assert result.stop_reason == "stop", part  # the model saw the error and answered
        assert [e.type for e in events].count("error") == 0, part
        end = next(e for e in events if e.type == "tool_end")
        assert end.is_error and f"Hook failed ({part}): RuntimeError: {part} broke" \
            in end.output, part
        assert (base / "ws" / "a.txt").exists() is ran, part
        assert len(after) == 1, part  # the later hooks are still told


def test_after_is_told_when_the_run_is_cancelled_inside_a_call(tmp_path):
    told: list[ToolOutcome | None] = []

    @contextlib.contextmanager
    def around(info):
        raise asyncio.CancelledError
        yield  # pragma: no cover

    agent, _ = agent_with(tmp_path, [ToolHooks(after=lambda i, o: told.append(o)),
                                     ToolHooks(around=around)])
    history = []
    result, _ = run(agent, history)
    assert result.stop_reason == "aborted" and told == [None]
    assert tool_results(history)[0].is_error  # the interrupted result keeps history valid
