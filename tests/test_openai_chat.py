"""The openai-chat adapter over real HTTP (loopback) against the scripted provider server.

The fault tests at the end exercise the shared request/retry machinery (http_model) and
run for BOTH wire APIs (the ``wire`` fixture); test_anthropic_messages.py covers what is
specific to Anthropic.
"""

import asyncio
import json
import socket
import sys
import time
from email.utils import formatdate

import pytest

from harness.agent import Agent, RunContext
from harness.events import Tokens
from harness.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from harness.models.anthropic_messages import AnthropicMessagesConfig, AnthropicMessagesModel
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
from harness.models.openai_chat import OpenAIChatConfig, OpenAIChatModel
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.transport import HttpxTransport
from harness.workspace.jail import Workspace
from tooling.provider_server import Reply

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")

REQUEST = ModelRequest("Be brief.", [UserMessage(text="hi")])
ADAPTERS = {
    "openai-chat": (OpenAIChatConfig, OpenAIChatModel),
    "anthropic-messages": (AnthropicMessagesConfig, AnthropicMessagesModel),
}


class Sleeps(list):
    """The injected sleep: records each delay and does not wait."""

    async def __call__(self, seconds):
        self.append(seconds)
        await asyncio.sleep(0)


def new_transport():
    """A transport for loopback HTTP. (httpx is imported here, not at module level: the
    in-Pyodide tier imports this file, then skips it.)"""
    import httpx

    # verify=False: plain http only, and it skips loading the CA bundle in every test.
    return HttpxTransport(client=httpx.AsyncClient(verify=False))


def make_model(base_url, transport, api="openai-chat", sleeps=None, **options):
    config_cls, model_cls = ADAPTERS[api]
    config = config_cls(model="test-model", base_url=base_url, api_key="sk-test", **options)
    return model_cls(config, transport, sleep=sleeps if sleeps is not None else Sleeps(),
                     backoff=Backoff(base_s=0.5, jitter=0))


def run_model(server, replies, request=REQUEST, *, base_url=None, **kwargs):
    """Script the replies, stream one request, return all model events."""
    server.script(replies)

    async def main():
        transport = new_transport()
        model = make_model(base_url or server.base_url, transport, **kwargs)
        try:
            return [e async for e in model.stream(request)]
        finally:
            await transport.aclose()

    return asyncio.run(main())


def text_of(events):
    return "".join(e.delta for e in events if isinstance(e, TextPart))


def posts(server):
    return [r for r in server.requests if r.method == "POST"]


# --- answers ----------------------------------------------------------------------


def test_text_streams_in_pieces_with_usage(server):
    events = run_model(server, [Reply(text="Hello there, brave new world.", usage=(12, 7))])
    parts = [e for e in events if isinstance(e, TextPart)]
    assert len(parts) > 3 and text_of(events) == "Hello there, brave new world."
    assert events[-1] == Done("stop", Tokens(input_tokens=12, output_tokens=7))


def test_multibyte_text_in_one_byte_body_chunks(server):
    text = "Héllo wörld — ✓ 日本語 🤔"
    events = run_model(server, [Reply(text=text, chunk_size=1)])
    assert text_of(events) == text and isinstance(events[-1], Done)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_deltas_from_either_field(server, field):
    events = run_model(server, [Reply(reasoning="First, think.", text="Answer.",
                                      reasoning_field=field)])
    reasoning = [e for e in events if isinstance(e, ReasoningPart)]
    assert "".join(e.delta for e in reasoning) == "First, think."
    assert events.index(reasoning[-1]) < events.index(next(e for e in events
                                                            if isinstance(e, TextPart)))
    assert text_of(events) == "Answer."


def test_tool_call_arguments_assembled_from_many_deltas(server):
    args = {"path": "notes/ü.txt", "content": "line one\nline two ✓ " * 5}
    events = run_model(server, [Reply(text="Writing.", tool_calls=[("write", args)],
                                      chunk_size=5)])
    calls = [e for e in events if isinstance(e, ToolCallPart)]
    assert len(calls) == 1 and calls[0].name == "write" and calls[0].id.startswith("call_")
    assert json.loads(calls[0].arguments) == args
    assert events[-1] == Done("tool_calls", Tokens(input_tokens=10, output_tokens=5))
    # Complete calls come after the text, once the choice finished.
    assert events.index(calls[0]) > max(i for i, e in enumerate(events) if isinstance(e, TextPart))


@pytest.mark.parametrize("interleave", [False, True])
def test_parallel_tool_calls_assembled_by_index(server, interleave):
    events = run_model(server, [Reply(tool_calls=[("read", {"path": "a.py"}),
                                                  ("grep", {"pattern": "def main", "path": "."})],
                                      interleave_tool_calls=interleave)])
    calls = [e for e in events if isinstance(e, ToolCallPart)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("read", '{"path": "a.py"}'), ("grep", '{"pattern": "def main", "path": "."}')]
    assert len({c.id for c in calls}) == 2


def test_malformed_tool_arguments_passed_through_raw(server):
    events = run_model(server, [Reply(tool_calls=[("read", '{"path": "a.t')])])
    calls = [e for e in events if isinstance(e, ToolCallPart)]
    assert calls[0].arguments == '{"path": "a.t'
    assert isinstance(events[-1], Done)


def test_legacy_function_call_deltas_and_missing_ids():
    # Older servers stream one call as delta.function_call, without an id; the stream
    # may also end without [DONE] once finish_reason came. (Decoder only: no HTTP.)
    from harness.models.openai_chat import _Decoder
    from harness.models.sse import SseEvent

    def chunk(delta, finish=None):
        return SseEvent(None, json.dumps({"choices": [{"index": 0, "delta": delta,
                                                       "finish_reason": finish}]}))

    decoder = _Decoder("host")
    events = [e for c in [chunk({"function_call": {"name": "ls", "arguments": ""}}),
                          chunk({"function_call": {"arguments": '{"path"'}}),
                          chunk({"function_call": {"arguments": ': "."}'}}, "function_call")]
              for e in decoder.feed(c)]
    (call,) = events
    assert call.name == "ls" and call.arguments == '{"path": "."}'
    assert call.id.startswith("call_") and len(call.id) > 10
    assert decoder.end() == Done("tool_calls", None)


def test_request_shape_with_history_tools_and_headers(server):
    history = [
        UserMessage(text="list and read"),
        AssistantMessage(text="Looking.", tool_calls=[
            ToolCall(id="call_a", name="ls", arguments="{}"),
            ToolCall(id="call_b", name="read", arguments='{"path": "x"}')]),
        ToolResult(call_id="call_a", name="ls", output="x\n"),
        ToolResult(call_id="call_b", name="read", output="ENOENT: x", is_error=True),
        AssistantMessage(tool_calls=[ToolCall(id="call_c", name="ls", arguments="{}")]),
        ToolResult(call_id="call_c", name="ls", output="x\n"),
        UserMessage(text="thanks"),
    ]
    tools = [ToolSpec("ls", "List a directory.", {"type": "object", "properties": {}})]
    run_model(server, [Reply(text="ok")], ModelRequest("System prompt.", history, tools),
              headers={"X-Custom": "yes"}, max_tokens=100, temperature=0.2)
    (request,) = posts(server)
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-custom"] == "yes"
    body = request.body
    assert body["model"] == "test-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100 and body["temperature"] == 0.2
    assert body["tools"] == [{"type": "function", "function": {
        "name": "ls", "description": "List a directory.",
        "parameters": {"type": "object", "properties": {}}}}]
    assert body["messages"] == [
        {"role": "system", "content": "System prompt."},
        {"role": "user", "content": "list and read"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "call_b", "type": "function",
             "function": {"name": "read", "arguments": '{"path": "x"}'}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "x\n"},
        {"role": "tool", "tool_call_id": "call_b", "content": "ENOENT: x"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_c", "content": "x\n"},
        {"role": "user", "content": "thanks"},
    ]


def test_without_api_key_or_options_nothing_extra_is_sent(server):
    server.script([Reply(text="ok")])

    async def main():
        transport = HttpxTransport()
        model = OpenAIChatModel(OpenAIChatConfig.model_validate(
            {"api": "openai-chat", "model": "m", "baseUrl": server.base_url + "/"}), transport)
        try:
            return [e async for e in model.stream(ModelRequest("", [UserMessage(text="hi")]))]
        finally:
            await transport.aclose()

    assert text_of(asyncio.run(main())) == "ok"
    (request,) = posts(server)
    assert "authorization" not in request.headers
    assert request.body["messages"] == [{"role": "user", "content": "hi"}]
    assert not {"tools", "max_tokens", "temperature"} & set(request.body)


def test_clean_end_after_finish_reason_without_done_is_accepted(server):
    # OpenAI format events: role, "ok", finish, usage, [DONE]; stop before the usage.
    events = run_model(server, [Reply(text="ok", cut_after=3, cut_clean=True)])
    assert text_of(events) == "ok" and events[-1] == Done("stop", None)


# --- the agent loop, end to end ---------------------------------------------------



def run_agent(server, tmp_path, prompt, system=""):
    """One agent run with the built-in tools against the server; (result, events, the
    conversation it made)."""

    async def main():
        transport = new_transport()
        agent = Agent(make_model(server.base_url, transport), ToolSet(builtin_tools()),
                      ToolContext(Workspace(tmp_path / "ws")))
        events = []
        context = RunContext("r1", system_prompt=system)
        try:
            return await agent.run(prompt, context, events.append), events, context.history
        finally:
            await transport.aclose()

    return asyncio.run(main())


def test_agent_completes_a_tool_call_turn(server, tmp_path):
    server.script([
        Reply(text="Let me write it.", tool_calls=[("write", {"path": "hello.txt",
                                                              "content": "hi ✓\n"})]),
        Reply(text="Done: wrote hello.txt."),
    ])

    result, events, history = run_agent(server, tmp_path, "write hello", "You are terse.")
    assert result.text == "Done: wrote hello.txt." and result.stop_reason == "stop"
    assert (tmp_path / "ws" / "hello.txt").read_text() == "hi ✓\n"
    usage = result.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.requests, usage.tool_calls,
            usage.cost) == (20, 10, 2, 1, None)  # no prices: no cost
    assert [e.type for e in events if e.type in ("tool_start", "tool_end")] == [
        "tool_start", "tool_end"]
    second = posts(server)[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[3]["tool_call_id"] == second[2]["tool_calls"][0]["id"]
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]


def test_agent_keeps_partial_text_when_the_stream_is_cut(server, tmp_path):
    server.script([Reply(text="one two three four five", cut_after=4)])

    result, events, history = run_agent(server, tmp_path, "go")
    assert result.stop_reason == "error" and result.text == "one two three "
    error = next(e for e in events if e.type == "error")
    assert error.code == "connection" and "cut mid-answer" in error.message
    assert history[-1] == AssistantMessage(text="one two three ")


# --- faults: the shared machinery, for both wire APIs -------------------------------


@pytest.fixture(params=list(ADAPTERS))
def wire(request):
    return request.param


def test_429_with_retry_after_seconds_then_success(server, wire):
    sleeps = Sleeps()
    events = run_model(server, [Reply(status=429, retry_after="2"), Reply(text="ok")],
                       api=wire, sleeps=sleeps)
    assert text_of(events) == "ok" and isinstance(events[-1], Done)
    assert sleeps == [2.0] and len(posts(server)) == 2


def test_retry_after_as_http_date(server, wire):
    sleeps = Sleeps()
    when = formatdate(time.time() + 3, usegmt=True)
    events = run_model(server, [Reply(status=503, retry_after=when), Reply(text="ok")],
                       api=wire, sleeps=sleeps)
    assert text_of(events) == "ok"
    assert len(sleeps) == 1 and 1.0 <= sleeps[0] <= 3.0


def test_retry_after_is_capped(server, wire):
    sleeps = Sleeps()
    run_model(server, [Reply(status=429, retry_after="3600"), Reply(text="ok")], api=wire,
              sleeps=sleeps)
    assert sleeps == [60.0]


def test_529_and_503_retried_with_exponential_backoff(server, wire):
    sleeps = Sleeps()
    events = run_model(server, [Reply(status=529), Reply(status=503), Reply(status=502),
                                Reply(text="ok")], api=wire, sleeps=sleeps)
    assert text_of(events) == "ok"
    assert sleeps == [0.5, 1.0, 2.0] and len(posts(server)) == 4


def test_retries_exhausted(server, wire):
    sleeps = Sleeps()
    events = run_model(server, [Reply(status=500)] * 3 + [Reply(status=429, error="slow down")],
                       api=wire, sleeps=sleeps, max_retries=3)
    assert events == [events[-1]] and isinstance(events[-1], Failed)
    assert events[-1].code == "http_429"
    assert "rate limited by 127.0.0.1" in events[-1].message
    assert "slow down" in events[-1].message and "after 3 retries" in events[-1].message
    assert len(sleeps) == 3 and len(posts(server)) == 4


@pytest.mark.parametrize(("status", "expected"), [
    (401, "the API key was rejected by 127.0.0.1"),
    (403, "check apiKey in the model options, and that the key may use the model 'test-model'"),
    (404, "check baseUrl and the model name 'test-model'"),
    (400, "rejected the request (HTTP 400: max_tokens is too large"),
])
def test_client_errors_name_the_fix_and_are_not_retried(server, wire, status, expected):
    message = "max_tokens is too large: 999999" if status == 400 else None
    events = run_model(server, [Reply(status=status, error=message), Reply(text="unused")],
                       api=wire)
    (failed,) = events
    assert failed.code == f"http_{status}" and expected in failed.message
    if status == 401:
        assert "check apiKey" in failed.message
    assert len(posts(server)) == 1


def test_json_error_body_message_is_shown(server, wire):
    (failed,) = run_model(server, [Reply(status=401, error="invalid x-api-key")], api=wire)
    kind = "authentication_error" if wire == "anthropic-messages" else "invalid_request_error"
    assert f"HTTP 401: invalid x-api-key ({kind})" in failed.message


def test_html_error_page_becomes_one_readable_line(server, wire):
    page = ("<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title>\n<style>b{}</style>"
            "</head><body><center><h1>502 Bad Gateway</h1></center><hr>nginx</body></html>")
    (failed,) = run_model(server, [Reply(status=502, body=page)], api=wire, max_retries=0)
    assert failed.code == "http_502" and "HTTP 502: 502 Bad Gateway" in failed.message
    assert "<" not in failed.message and "\n" not in failed.message


def test_html_page_without_title_uses_its_text(server, wire):
    page = "<html><body><script>var x = 1;</script><h1>Down</h1><p>Back &amp; soon</p>"
    (failed,) = run_model(server, [Reply(status=503, body=page * 50)], api=wire,
                          max_retries=0)
    assert "HTTP 503: Down Back & soon Down" in failed.message
    assert "<" not in failed.message and "var x" not in failed.message
    assert len(failed.message) < 420 and failed.message.count("…") == 1


def test_200_with_a_non_stream_body_is_a_bad_response(server, wire):
    (failed,) = run_model(server, [Reply(body="<html><title>Login required</title></html>")],
                          api=wire)
    assert failed.code == "bad_response" and "Login required" in failed.message
    assert len(posts(server)) == 1


def test_in_stream_error_event(server, wire):
    events = run_model(server, [Reply(text="partial answer here and more",
                                      error_event_after=5, error="Overloaded")], api=wire)
    assert text_of(events) and isinstance(events[-1], Failed)
    assert events[-1].code == "stream_error" and "Overloaded" in events[-1].message
    assert len(posts(server)) == 1


@pytest.mark.parametrize("cut_after", [0, 1])
def test_cut_before_any_model_event_is_retried(server, wire, cut_after):
    sleeps = Sleeps()
    events = run_model(server, [Reply(text="lost", cut_after=cut_after), Reply(text="ok")],
                       api=wire, sleeps=sleeps)
    assert text_of(events) == "ok" and isinstance(events[-1], Done)
    assert len(sleeps) == 1 and len(posts(server)) == 2


def test_cut_after_a_text_delta_fails_and_is_not_retried(server, wire):
    events = run_model(server, [Reply(text="one two three four five six", cut_after=5),
                                Reply(text="never")], api=wire)
    assert text_of(events).startswith("one ")
    assert isinstance(events[-1], Failed) and events[-1].code == "connection"
    assert "cut mid-answer" in events[-1].message and len(posts(server)) == 1


def test_clean_end_without_terminator_after_text_is_an_early_end(server, wire):
    events = run_model(server, [Reply(text="one two three four five six", cut_after=5,
                                      cut_clean=True), Reply(text="never")], api=wire)
    assert text_of(events)
    assert isinstance(events[-1], Failed) and events[-1].code == "stream_error"
    assert "ended early" in events[-1].message and len(posts(server)) == 1


def test_idle_timeout_mid_stream(server, wire):
    start = time.monotonic()
    events = run_model(server, [Reply(text="a b c", event_delay_s=2)], api=wire,
                       idle_timeout_ms=200)
    assert isinstance(events[-1], Failed) and events[-1].code == "idle_timeout"
    assert "0.2 s" in events[-1].message and time.monotonic() - start < 1.5


def test_idle_timeout_waiting_for_the_response(server, wire):
    (failed,) = run_model(server, [Reply(text="late", delay_s=1)], api=wire,
                          idle_timeout_ms=200)
    assert failed.code == "idle_timeout" and "sent no response" in failed.message


def test_connection_refused(server, wire):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps = Sleeps()
    events = run_model(server, [], base_url=f"http://127.0.0.1:{port}/v1", api=wire,
                       sleeps=sleeps, max_retries=2)
    (failed,) = events
    assert failed.code == "connection" and f"could not reach 127.0.0.1:{port}" in failed.message
    assert "check baseUrl" in failed.message and len(sleeps) == 2


def test_cancelling_the_consumer_closes_the_response(server, wire):
    server.script([Reply(text="word " * 200, event_delay_s=0.02)])

    async def main():
        transport = new_transport()
        model = make_model(server.base_url, transport, api=wire)
        seen = []

        async def consume():
            async for event in model.stream(REQUEST):
                seen.append(event)

        task = asyncio.create_task(consume())
        while not any(isinstance(e, TextPart) for e in seen):
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            await transport.aclose()
        return seen

    seen = asyncio.run(main())
    assert not any(isinstance(e, Done | Failed) for e in seen)
    deadline = time.monotonic() + 5
    while posts(server)[0].outcome != "client_closed" and time.monotonic() < deadline:
        time.sleep(0.02)
    assert posts(server)[0].outcome == "client_closed"
