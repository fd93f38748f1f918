"""The worker-facing session: JSON fs replies, runs through the runtime, option errors."""

import asyncio
import json

import pytest

from harness.errors import UsageError
from harness.runtime.native import NativeRuntime
from harness.session import Session


def make(tmp_path, turns=(), **options):
    runtime = NativeRuntime(str(tmp_path / "ws"))
    config = json.dumps({"model": {"api": "scripted", "turns": list(turns)}, **options})
    return Session.from_options(config, runtime), runtime


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
    assert rt.messages[0] == {"runId": "r1", "seq": 0, "type": "run_start", "prompt": "list",
                              "attachments": []}
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
        Session.from_options(json.dumps(options), NativeRuntime(str(tmp_path)))
    assert message in str(info.value)


def test_builtin_tool_selection_and_system_prompt(tmp_path):
    s, _ = make(tmp_path, builtinTools=["read", "ls"], systemPrompt="Be terse.")
    assert s.agent.tools.names() == ["read", "ls"]
    assert s.system_prompt.startswith("Be terse.")
    assert "Tools available: read, ls" in s.system_prompt


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


def test_a_session_from_options_has_threads_and_resumes_a_conversation(tmp_path):
    """The composition root on CPython: the same threads as in the worker (here in
    memory), each run recorded in the current thread, h.threads working, and the agent
    continuing whichever thread is current."""
    s, _ = make(tmp_path, [{"text": "noted"}, {"text": "hello"}, {"text": "it was 42"}])

    def prompt(run_id, text):
        async def go():
            return await s.prompt(run_id, text)

        return asyncio.run(go())

    def threads(**request):
        reply = json.loads(s.threads(json.dumps(request)))
        assert reply["ok"], reply
        return reply["value"]

    prompt("r1", "remember 42")
    first = threads(op="list")["current"]
    transcript = threads(op="transcript")["events"]
    assert (transcript[0]["type"], transcript[-1]["type"]) == ("run_start", "run_end")
    threads(op="create", title="other")
    prompt("r2", "hi")
    history = s.conversations.store.current.history  # what the next run continues
    assert [m.text for m in history if m.role == "user"] == ["hi"]
    assert threads(op="switch", id=first)["messages"] == 2
    assert prompt("r3", "what was it?").text == "it was 42"
    request = s.agent.model.requests[-1]
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[0].text == "remember 42"
    assert [t["title"] for t in threads(op="list")["threads"]] == ["remember 42", "other"]


class EndCounting(NativeRuntime):
    """Says, at each ``run_ended``, how many run_end events had gone out by then."""

    def __init__(self, root):
        super().__init__(root)
        self.ended: list[int] = []

    def run_ended(self) -> None:
        self.ended.append(sum(m["type"] == "run_end" for m in self.messages))


def test_the_runtime_is_told_once_when_each_run_ends_however_it_ends(tmp_path):
    """The sandbox's lifecycle is explicit: runtime.run_ended() once per run, after its
    run_end went out, whether it stopped, was cancelled, hit the step limit or failed;
    a prompt refused while another runs is no run of its own (its sandbox is in use)."""
    runtime = EndCounting(str(tmp_path / "ws"))
    turns = [{"text": "done"}, {"text": "a b c d e f", "delayMs": 200},
             {"toolCalls": [{"name": "ls", "arguments": {}}]}]  # then: script exhausted
    config = {"model": {"api": "scripted", "turns": turns}, "maxSteps": 1}
    s = Session.from_options(json.dumps(config), runtime)

    async def go():
        reasons = [(await s.prompt("r1", "a")).stop_reason]
        task = s.prompt("r2", "b")
        await s.prompt("busy", "refused")
        s.cancel("r2")
        reasons.append((await task).stop_reason)
        reasons.append((await s.prompt("r3", "c")).stop_reason)
        reasons.append((await s.prompt("r4", "d")).stop_reason)
        return reasons

    assert asyncio.run(go()) == ["stop", "aborted", "max_steps", "error"]
    assert runtime.ended == [1, 3, 4, 5]  # the refusal's run_end is the 2nd: no call
