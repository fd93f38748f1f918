"""The anthropic-messages adapter over real HTTP (loopback) against the provider server.

The shared faults (retries, error bodies, cuts, timeouts, cancellation) run for this
adapter too, in test_openai_chat.py; here is what is specific to the Messages API.
"""

import asyncio
import json
import sys
from urllib.parse import urlsplit

import pytest

from harness.agent import Agent, RunContext
from harness.events import Tokens
from harness.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from harness.models.anthropic_messages import (
    AnthropicMessagesConfig,
    AnthropicMessagesModel,
    to_wire_messages,
)
from harness.models.base import (
    Done,
    Failed,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolSpec,
)
from harness.models.http_model import Backoff
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.transport import HttpxTransport
from harness.workspace.jail import Workspace
from tooling.provider_server import Reply

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")

REQUEST = ModelRequest("Be brief.", [UserMessage(text="hi")])


def new_transport():
    import httpx  # here, not at module level: the in-Pyodide tier imports this file

    return HttpxTransport(client=httpx.AsyncClient(verify=False))


def make_model(server, transport, **options):
    config = AnthropicMessagesConfig(model="claude-test", base_url=server.base_url,
                                     api_key="sk-ant-test", **options)

    async def no_wait(seconds):
        await asyncio.sleep(0)

    return AnthropicMessagesModel(config, transport, sleep=no_wait, backoff=Backoff(jitter=0))


def run_model(server, replies, request=REQUEST, **options):
    server.script(replies)

    async def main():
        transport = new_transport()
        try:
            return [e async for e in make_model(server, transport, **options).stream(request)]
        finally:
            await transport.aclose()

    return asyncio.run(main())


def text_of(events):
    return "".join(e.delta for e in events if isinstance(e, TextPart))


def posts(server):
    return [r for r in server.requests if r.method == "POST"]


def test_text_and_usage(server):
    events = run_model(server, [Reply(text="Hello there, brave new world ✓.", usage=(30, 9),
                                      chunk_size=3)])
    assert text_of(events) == "Hello there, brave new world ✓."
    assert len([e for e in events if isinstance(e, TextPart)]) > 3
    assert events[-1] == Done("stop", Tokens(input_tokens=30, output_tokens=9))


def test_tool_use_blocks_become_complete_calls(server):
    args = {"path": "src/ü.py", "content": "print('hi')\n" * 4}
    events = run_model(server, [Reply(text="Two calls.", tool_calls=[
        ("write", args), ("ls", {})])])
    calls = [e for e in events if isinstance(e, ToolCallPart)]
    assert [c.name for c in calls] == ["write", "ls"]
    assert json.loads(calls[0].arguments) == args and calls[1].arguments == "{}"
    assert all(c.id.startswith("toolu_") for c in calls) and calls[0].id != calls[1].id
    assert events[-1].stop_reason == "tool_calls"


def test_malformed_tool_arguments_passed_through_raw(server):
    events = run_model(server, [Reply(tool_calls=[("read", '{"path": ')])])
    assert [e.arguments for e in events if isinstance(e, ToolCallPart)] == ['{"path": ']


def test_thinking_streams_as_reasoning(server):
    events = run_model(server, [Reply(reasoning="Consider the options.", text="Do X.")],
                       thinking_budget=2048)
    assert "".join(e.delta for e in events if isinstance(e, ReasoningPart)) == (
        "Consider the options.")
    assert text_of(events) == "Do X."
    assert posts(server)[0].body["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_request_shape(server):
    history = [
        UserMessage(text="look"),
        AssistantMessage(text="Reading both.", tool_calls=[
            ToolCall(id="toolu_a", name="read", arguments='{"path": "a"}'),
            ToolCall(id="toolu_b", name="read", arguments='{"path": ')]),  # malformed
        ToolResult(call_id="toolu_a", name="read", output="A"),
        ToolResult(call_id="toolu_b", name="read", output="bad JSON", is_error=True),
        UserMessage(text="and now?"),
    ]
    tools = [ToolSpec("read", "Read a file.", {"type": "object"})]
    run_model(server, [Reply(text="ok")], ModelRequest("System.", history, tools),
              headers={"X-Extra": "1"}, temperature=0.5)
    (request,) = posts(server)
    assert request.path == "/v1/messages"
    headers = request.headers
    assert headers["x-api-key"] == "sk-ant-test" and headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert headers["x-extra"] == "1" and "authorization" not in headers
    body = request.body
    assert body["model"] == "claude-test" and body["max_tokens"] == 4096
    assert body["stream"] is True and body["system"] == "System." and body["temperature"] == 0.5
    assert "thinking" not in body
    assert body["tools"] == [{"name": "read", "description": "Read a file.",
                              "input_schema": {"type": "object"}}]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "look"}]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Reading both."},
            {"type": "tool_use", "id": "toolu_a", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_b", "name": "read", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A", "is_error": False},
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "bad JSON",
             "is_error": True},
            {"type": "text", "text": "and now?"}]},
    ]


def test_empty_assistant_turns_and_texts_are_left_out():
    wire = to_wire_messages([UserMessage(text="a"), AssistantMessage(text=""),
                             UserMessage(text=""), UserMessage(text="b")])
    assert wire == [{"role": "user", "content": [{"type": "text", "text": "a"},
                                                 {"type": "text", "text": "b"}]}]


def test_thinking_blocks_are_sent_back_for_the_tool_use_continuation(server):
    server.script([Reply(reasoning="I should list.", tool_calls=[("ls", {})]),
                   Reply(text="Done."), Reply(text="Still fine.")])

    def continuation(call_id):
        return ModelRequest("Be brief.", [
            UserMessage(text="hi"),
            AssistantMessage(tool_calls=[ToolCall(id=call_id, name="ls", arguments="{}")]),
            ToolResult(call_id=call_id, name="ls", output="a\n")])

    async def main():
        transport = new_transport()
        model = make_model(server, transport, thinking_budget=1024)
        try:
            first = [e async for e in model.stream(REQUEST)]
            call = next(e for e in first if isinstance(e, ToolCallPart))
            second = [e async for e in model.stream(continuation(call.id))]
            # A model that never saw that turn (e.g. after a restart) cannot send the
            # blocks back, so it sends the request without thinking rather than have it
            # rejected.
            fresh = make_model(server, transport, thinking_budget=1024)
            third = [e async for e in fresh.stream(continuation(call.id))]
        finally:
            await transport.aclose()
        return second, third

    second, third = asyncio.run(main())
    assert text_of(second) == "Done." and text_of(third) == "Still fine."
    body = posts(server)[1].body
    assert body["thinking"]["type"] == "enabled"
    blocks = body["messages"][1]["content"]
    assert blocks[0]["type"] == "thinking" and blocks[0]["thinking"] == "I should list."
    assert blocks[0]["signature"].startswith("sig-") and blocks[1]["type"] == "tool_use"
    body = posts(server)[2].body
    assert "thinking" not in body and body["messages"][1]["content"][0]["type"] == "tool_use"


def test_overloaded_error_event_mid_stream(server):
    events = run_model(server, [Reply(text="partial and more", error_event_after=4)])
    assert text_of(events) == "partial "
    host = urlsplit(server.url).netloc
    # What message_start reported is spent all the same: the failure carries it.
    assert events[-1] == Failed(f"{host} reported an error mid-answer: Overloaded "
                                "(overloaded_error)", "stream_error",
                                Tokens(input_tokens=10, output_tokens=1))


def test_529_overloaded_body_then_success(server):
    events = run_model(server, [Reply(status=529), Reply(text="ok")])
    assert text_of(events) == "ok" and len(posts(server)) == 2


def test_missing_api_key_is_named_in_the_401(server):
    server.script([Reply(status=401, error="x-api-key header is required")])

    async def main():
        config = AnthropicMessagesConfig.model_validate(
            {"api": "anthropic-messages", "model": "claude-test", "baseUrl": server.base_url})
        transport = new_transport()
        try:
            return [e async for e in AnthropicMessagesModel(config, transport).stream(REQUEST)]
        finally:
            await transport.aclose()

    (failed,) = asyncio.run(main())
    assert "x-api-key" not in posts(server)[0].headers
    assert failed.code == "http_401" and "check apiKey" in failed.message
    assert "x-api-key header is required (authentication_error)" in failed.message


def test_agent_completes_a_tool_call_turn(server, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "todo.txt").write_text("buy milk\n")
    server.script([Reply(tool_calls=[("read", {"path": "todo.txt"})]),
                   Reply(text="It says: buy milk.")])

    async def main():
        transport = new_transport()
        agent = Agent(make_model(server, transport), ToolSet(builtin_tools()),
                      ToolContext(Workspace(tmp_path / "ws")))
        events = []
        context = RunContext("r1", system_prompt="You are terse.")
        try:
            return await agent.run("what is in todo.txt?", context, events.append), events
        finally:
            await transport.aclose()

    result, events = asyncio.run(main())
    assert result.text == "It says: buy milk." and result.stop_reason == "stop"
    tool_end = next(e for e in events if e.type == "tool_end")
    assert "buy milk" in tool_end.output and not tool_end.is_error
    second = posts(server)[1].body["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[2]["content"][0]["type"] == "tool_result"
    assert second[2]["content"][0]["tool_use_id"] == second[1]["content"][0]["id"]
