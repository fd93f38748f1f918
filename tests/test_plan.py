"""Plan mode (harness/policy/plan.py) through the session: a plan run is offered only
read-only tools, refuses every other call, changes nothing, and ends with a ``plan``
event; the approved plan is then carried out by a normal run that is given it. The
shell's side (commands and their changes refused where they happen) is proved in the
browser (e2e/test_plan.py): CPython has no sandbox."""

import asyncio
import hashlib
import json

import pytest

from harness.agent import PLAN_HEADING
from harness.messages import UserMessage
from harness.policy.plan import PLAN_PROMPT, PlanGate, plan_rules
from harness.runtime.native import NativeRuntime
from harness.session import Session

HOSTILE = [  # a model that tries every way to change /work while planning
    {"text": "Let me look.", "toolCalls": [
        {"name": "ls", "arguments": {}},
        {"name": "read", "arguments": {"path": "a.txt"}},
        {"name": "write", "arguments": {"path": "a.txt", "content": "changed"}},
        {"name": "edit", "arguments": {"path": "a.txt", "edits": [
            {"oldText": "original", "newText": "changed"}]}},
        {"name": "bash", "arguments": {"command": "echo x > a.txt"}},
        {"name": "save_note", "arguments": {"text": "x"}},
        {"name": "lookup", "arguments": {"q": "x"}},
    ]},
    {"text": "1. Change a.txt to say hello.\n2. Check it."},
]
TOOLS = [
    {"name": "save_note", "description": "writes a note", "parameters": {"type": "object"}},
    {"name": "lookup", "description": "reads", "parameters": {"type": "object"},
     "readOnly": True},
]


def make(tmp_path, turns, **options):
    runtime = NativeRuntime(str(tmp_path / "ws"), threads=str(tmp_path / "state" / "threads"))
    config = {"model": {"api": "scripted", "turns": turns}, "pageTools": TOOLS, **options}
    session = Session.from_options(json.dumps(config), runtime)
    (tmp_path / "ws" / "a.txt").write_text("original\n")
    return session, runtime


def prompt(session, run_id, text="go", **options):
    async def go():
        return await session.prompt(run_id, text, "[]", json.dumps(options))
    return asyncio.run(go())


def tree_hash(root):
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_a_plan_run_refuses_every_writing_tool_and_ends_with_its_plan(tmp_path):
    s, rt = make(tmp_path, HOSTILE)
    before = tree_hash(tmp_path / "ws")
    result = prompt(s, "r1", "plan the change", mode="plan")
    assert tree_hash(tmp_path / "ws") == before
    assert result.stop_reason == "stop"
    events = [m for m in rt.messages if m.get("runId") == "r1"]
    assert events[0]["mode"] == "plan"
    ends = {e["name"]: e for e in events if e["type"] == "tool_end"}
    assert not ends["ls"]["isError"] and not ends["read"]["isError"]
    for name in ("write", "edit", "save_note"):
        assert ends[name]["isError"] and "this is a plan run" in ends[name]["output"], name
    assert ends["bash"]["isError"] and "Unknown tool 'bash'" in ends["bash"]["output"]  # no shell
    assert "only run in the browser" in ends["lookup"]["output"]  # offered: a readOnly page tool
    plan = [e for e in events if e["type"] == "plan"]
    assert plan == [{"runId": "r1", "seq": events[-1]["seq"] - 1, "type": "plan",
                     "text": "1. Change a.txt to say hello.\n2. Check it."}]
    request = s.agent.model.requests[0]
    assert sorted(t.name for t in request.tools) == ["find", "grep", "lookup", "ls", "read"]
    assert PLAN_PROMPT in request.system


def test_the_approved_plan_is_carried_out_with_the_normal_tools(tmp_path):
    turns = [{"text": "1. Write b.txt."},
             {"toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "b"}}]},
             {"text": "Done."}]
    s, rt = make(tmp_path, turns)
    planned = prompt(s, "r1", "add b.txt", mode="plan")
    result = prompt(s, "r2", "go ahead", plan=planned.text + "\n2. Nothing else.")
    assert result.stop_reason == "stop" and (tmp_path / "ws" / "b.txt").read_text() == "b"
    start = next(m for m in rt.messages if m.get("runId") == "r2")
    assert start["plan"] == "1. Write b.txt.\n2. Nothing else." and "mode" not in start
    user = [m for m in s.conversations.store.current.history if isinstance(m, UserMessage)]
    assert user[-1].text == f"go ahead\n\n{PLAN_HEADING}\n\n1. Write b.txt.\n2. Nothing else."
    assert "write" in [t.name for t in s.agent.model.requests[-1].tools]
    assert PLAN_PROMPT not in s.agent.model.requests[-1].system
    assert not [m for m in rt.messages if m.get("runId") == "r2" and m["type"] == "plan"]


@pytest.mark.parametrize("options", [{"mode": "build"}, {"plan": 3}, {"other": 1}])
def test_bad_prompt_options_are_refused_with_a_clear_error(tmp_path, options):
    s, rt = make(tmp_path, [{"text": "never"}])
    prompt(s, "r1", **options)
    events = [m for m in rt.messages if m.get("runId") == "r1"]
    assert [e["type"] for e in events] == ["run_start", "error", "run_end"]
    assert events[1]["code"] == "invalid_prompt" and events[-1]["stopReason"] == "error"


def test_the_plan_gate_checks_each_command_and_refuses_every_change():
    gate = PlanGate(plan_rules("bash", ["ls *", "cat *", "git status"]), "bash", None)

    async def go():
        return ([await gate.command(c) for c in ("ls -la", "cat a.txt", "git status",
                                                 "rm -rf x", "git status --x", "catx")],
                await gate.writes_of(None, [], {}),
                await gate.writes_of(None, [f"/work/f{i}" for i in range(7)], {}))

    verdicts, none, refused = asyncio.run(go())
    assert verdicts[:3] == [None, None, None]
    assert all(v is not None and "not run in plan mode" in v for v in verdicts[3:])
    assert none is None
    assert refused.startswith("plan mode: nothing in /work may change")
    assert "/work/f0" in refused and "and 2 more" in refused
