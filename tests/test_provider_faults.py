"""Provider faults through the whole loop, for both wire APIs, over real loopback HTTP.

Each fault must end the run with success or a typed error event, leave a history a
provider accepts (every tool call answered once), never run a tool whose arguments
were cut or invalid, and leave the conversation working: the next prompt succeeds.
(test_openai_chat.py covers each fault at the model level.)
"""

import asyncio
import json
import sys

import pytest
from history_checks import consistent

from harness import events as ev
from harness.agent import Agent, RunContext
from harness.messages import Message
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.workspace.jail import Workspace
from tooling.provider_server import Reply

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")

CUT_ARGS = '{"path": "t.txt", "content": "a'
FAULTS = {
    # name: (replies for the first prompt, expected stop reason, expected error code)
    "429 then success": ([Reply(status=429, retry_after="1"), Reply(text="ok")], "stop", None),
    "5xx until retries run out": ([Reply(status=503), Reply(status=502)], "error", "http_502"),
    "401": ([Reply(status=401)], "error", "http_401"),
    "HTML error page": ([Reply(status=502, body="<html><title>Bad gateway</title>")] * 2,
                        "error", "http_502"),
    "error event mid-stream": ([Reply(text="one two three four", error_event_after=3)],
                               "error", "stream_error"),
    "connection reset mid-stream": ([Reply(text="one two three four five six", cut_after=5)],
                                    "error", "connection"),
    "stall mid-stream": ([Reply(text="one two three", event_delay_s=1.0)], "error",
                         "idle_timeout"),
    "truncated tool-call JSON": ([Reply(tool_calls=[("write", CUT_ARGS)]), Reply(text="ok")],
                                 "stop", None),
    "invalid tool-call JSON": ([Reply(tool_calls=[("write", '{"path": t.txt}')]),
                                Reply(text="ok")], "stop", None),
    "stream cut inside a tool call": ([Reply(tool_calls=[("write", {"path": "t.txt",
                                                                    "content": "x" * 200})],
                                             cut_after=6)] * 2, "error", "connection"),
}


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_fault_ends_typed_and_the_next_prompt_works(server, tmp_path, wire, fault):
    from test_openai_chat import Sleeps, make_model, new_transport

    replies, stop_reason, code = FAULTS[fault]
    server.script([*replies, Reply(text="fine")])

    async def main():
        transport = new_transport()
        model = make_model(server.base_url, transport, api=wire, sleeps=Sleeps(),
                           max_retries=1, idle_timeout_ms=300)
        agent = Agent(model, ToolSet(builtin_tools()), ToolContext(Workspace(tmp_path / "ws")))
        out = []

        def sink(event):
            out.append(json.loads(ev.to_json(event)))

        try:
            history: list[Message] = []  # one conversation, continued by the second run
            first = await agent.run("go", RunContext("r1", history), sink)
            second = await agent.run("again", RunContext("r2", history), sink)
            return first, second, out, history
        finally:
            await transport.aclose()

    first, second, out, history = asyncio.run(main())
    first_events = [e for e in out if e["runId"] == "r1"]
    assert first.stop_reason == stop_reason and first_events[-1]["type"] == "run_end"
    errors = [e for e in first_events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ([code] if code else [])
    assert second.stop_reason == "stop" and second.text == "fine"
    assert consistent(history)
    assert not (tmp_path / "ws" / "t.txt").exists()  # cut or invalid arguments never ran
    if "tool-call JSON" in fault:
        (end,) = [e for e in first_events if e["type"] == "tool_end"]
        assert end["isError"] and "not valid JSON" in end["output"]
    last = [r for r in server.requests if r.method == "POST"][-1]
    assert last.body is not None and last.outcome == "complete"
