"""The worker-facing session: JSON fs replies, runs through the runtime, option errors."""

import asyncio
import json

import pytest

from harness.errors import UsageError
from harness.runtime.native import NativeRuntime
from harness.session import Session


def make(tmp_path, turns=(), **options):
    runtime = NativeRuntime()
    config = json.dumps({"model": {"api": "scripted", "turns": list(turns)}, **options})
    return Session.create(config, str(tmp_path / "ws"), runtime), runtime


def test_fs_replies(tmp_path):
    s, _ = make(tmp_path)
    assert json.loads(s.fs('{"op": "writeFile", "path": "a"}', b"xyz")) == {"ok": True,
                                                                           "value": None}
    assert s.fs('{"op": "readFile", "path": "a"}') == b"xyz"
    assert json.loads(s.fs('{"op": "stat", "path": "a"}'))["value"]["size"] == 3
    bad = json.loads(s.fs('{"op": "readFile", "path": "../a"}'))
    assert bad["ok"] is False and bad["code"] == "EACCES"
    assert bad["message"].startswith("EACCES: ")
    unknown = json.loads(s.fs('{"op": "explode"}'))
    assert unknown["code"] == "EINVAL" and "unknown fs operation" in unknown["message"]


def test_run_events_go_through_the_runtime(tmp_path):
    s, rt = make(tmp_path, [{"text": "hi", "toolCalls": [{"name": "ls", "arguments": {}}]},
                            {"text": "bye"}])

    async def go():
        return await s.prompt("r1", "list")

    result = asyncio.run(go())
    assert result.text == "bye"
    assert rt.messages[0] == {"runId": "r1", "seq": 0, "type": "run_start", "prompt": "list"}
    assert rt.messages[-1]["type"] == "run_end" and rt.messages[-1]["stopReason"] == "stop"


def test_second_prompt_while_running_is_refused_with_an_error_event(tmp_path):
    s, rt = make(tmp_path, [{"text": "a b c d e f", "delayMs": 10}])

    async def go():
        first = s.prompt("r1", "one")
        await s.prompt("r2", "two")
        await first

    asyncio.run(go())
    r2 = [m for m in rt.messages if m["runId"] == "r2"]
    assert [m["type"] for m in r2] == ["run_start", "error", "run_end"]
    assert r2[1]["code"] == "busy"
    r1_end = [m for m in rt.messages if m["runId"] == "r1"][-1]
    assert r1_end["stopReason"] == "stop"


def test_cancel(tmp_path):
    s, rt = make(tmp_path, [{"text": "a b c d e f g h", "delayMs": 20}])

    async def go():
        task = s.prompt("r1", "go")
        await asyncio.sleep(0.03)
        assert s.cancel("other") is False
        assert s.cancel() is True
        await task

    asyncio.run(go())
    assert rt.messages[-1]["stopReason"] == "aborted"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": {"api": "gpt"}}, "'model'"),
        ({}, "'model': Field required"),
        ({"model": {"api": "scripted", "turns": []}, "maxSteps": 0}, "'maxSteps'"),
        ({"model": {"api": "scripted", "turns": []}, "builtinTools": ["rm"]}, "builtinTools"),
        ({"model": {"api": "scripted", "turns": []}, "colour": "red"}, "'colour'"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path, options, message):
    with pytest.raises(UsageError) as info:
        Session.create(json.dumps(options), str(tmp_path), NativeRuntime())
    assert message in str(info.value)


def test_builtin_tool_selection_and_system_prompt(tmp_path):
    s, _ = make(tmp_path, builtinTools=["read", "ls"], systemPrompt="Be terse.")
    assert s.agent.tools.names() == ["read", "ls"]
    assert s.agent.system_prompt.startswith("Be terse.")
    assert "Tools available: read, ls" in s.agent.system_prompt


def test_cancel_before_the_run_starts_still_ends_it(tmp_path):
    # A page can cancel in the same tick as it prompts (an already-aborted signal): the
    # run must still start and end with run_end "aborted", or run.done would never settle.
    s, rt = make(tmp_path, [{"text": "never"}, {"text": "next"}])

    async def go():
        task = s.prompt("r1", "go")
        s.cancel("r1")
        await task
        await s.prompt("r2", "again")

    asyncio.run(go())
    r1 = [m for m in rt.messages if m["runId"] == "r1"]
    assert r1[0]["type"] == "run_start" and r1[-1]["type"] == "run_end"
    assert r1[-1]["stopReason"] == "aborted"
    assert [m for m in rt.messages if m["runId"] == "r2"][-1]["stopReason"] == "stop"
