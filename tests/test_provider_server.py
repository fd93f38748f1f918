"""The scripted provider server itself: wire formats, CORS, recording, scripting, CLI.

Plain stdlib HTTP (http.client), so what is checked is the server, not an adapter.
"""

import http.client
import json
import re
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from tooling.provider_server import Reply

pytestmark = pytest.mark.skipif(sys.platform == "emscripten", reason="no sockets in Pyodide")


def call(url, method="POST", path="/v1/chat/completions", body=None, headers=None):
    """One request; returns (status, lower-cased headers, body bytes)."""
    conn = http.client.HTTPConnection(urlsplit(url).netloc, timeout=5)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=payload, headers={"content-type": "application/json",
                                                          **(headers or {})})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def data_events(body):
    return [json.loads(line[6:]) if line != "data: [DONE]" else "[DONE]"
            for line in body.decode().split("\n") if line.startswith("data: ")]


def test_openai_wire_format(server):
    server.script([Reply(text="Hi there", tool_calls=[("ls", {"path": "."})], usage=(4, 2))])
    status, headers, body = call(server.url, body={"model": "gpt-x", "messages": []})
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert headers["transfer-encoding"] == "chunked"
    events = data_events(body)
    assert events[-1] == "[DONE]" and body.endswith(b"data: [DONE]\n\n")
    chunks = events[:-1]
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == "gpt-x" for c in chunks)
    assert len({c["id"] for c in chunks}) == 1 and all(isinstance(c["created"], int)
                                                      for c in chunks)
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert chunks[-2]["choices"][0] == {"index": 0, "delta": {}, "logprobs": None,
                                        "finish_reason": "tool_calls"}
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == {
        "prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6}
    first_call = next(c for c in chunks if c["choices"] and "tool_calls" in
                      c["choices"][0]["delta"])["choices"][0]["delta"]["tool_calls"][0]
    assert first_call["index"] == 0 and first_call["type"] == "function"
    assert first_call["function"] == {"name": "ls", "arguments": ""}


def test_anthropic_wire_format(server):
    server.script([Reply(reasoning="Hmm.", text="Hi", tool_calls=[("ls", {})])])
    status, _, body = call(server.url, path="/v1/messages", body={"model": "claude-x"})
    assert status == 200
    names = re.findall(r"^event: (\w+)$", body.decode(), flags=re.MULTILINE)
    assert names == [
        "message_start", "content_block_start", "ping", "content_block_delta",
        "content_block_delta", "content_block_stop",  # thinking + signature
        "content_block_start", "content_block_delta", "content_block_stop",  # text
        "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop",  # tool_use: an empty partial_json first, then the input
        "message_delta", "message_stop"]
    events = data_events(body)
    assert [e["type"] for e in events] == names
    assert events[0]["message"]["model"] == "claude-x"
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def normalized(body):
    return re.sub(rb'"(chatcmpl|call)-?_?\d+"|"created": \d+', b"", body)


def test_chunk_size_changes_only_the_framing(server):
    reply = {"text": "é ✓ 日本", "toolCalls": [["ls", {"path": "ü"}]]}
    server.script([reply, {**reply, "chunkSize": 1}])
    whole, one_byte = (call(server.url, body={"model": "m"})[2] for _ in range(2))
    assert normalized(whole) == normalized(one_byte)


def test_preflight_and_cors_headers(server):
    status, headers, body = call(server.url, "OPTIONS", "/v1/messages", headers={
        "Origin": "http://page.test", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key, anthropic-version, x-custom"})
    assert status == 204 and body == b""
    assert headers["access-control-allow-origin"] == "*"
    assert "POST" in headers["access-control-allow-methods"]
    assert headers["access-control-allow-headers"] == "x-api-key, anthropic-version, x-custom"
    server.script([Reply(status=429, retry_after="1")])
    status, headers, _ = call(server.url, path="/v1/messages", body={})
    assert status == 429 and headers["access-control-allow-origin"] == "*"
    assert "retry-after" in headers["access-control-expose-headers"]
    assert headers["retry-after"] == "1"


def test_requests_are_recorded(server):
    server.script([Reply(text="ok")])
    call(server.url, body={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
         headers={"Authorization": "Bearer k", "X-Custom": "Yes"})
    (recorded,) = server.requests
    assert (recorded.method, recorded.path) == ("POST", "/v1/chat/completions")
    assert recorded.headers["authorization"] == "Bearer k"
    assert recorded.headers["x-custom"] == "Yes"
    assert recorded.body["messages"][0]["content"] == "hi"
    assert recorded.outcome == "complete"


def test_require_headers(server):
    server.script([Reply(text="ok", require_headers={"X-Page-Token": "t1"})] * 2)
    status, _, body = call(server.url, path="/v1/messages", body={})
    assert status == 401
    error = json.loads(body)
    assert error["type"] == "error" and error["error"]["type"] == "authentication_error"
    assert "X-Page-Token: t1" in error["error"]["message"]
    status, _, _ = call(server.url, path="/v1/messages", body={}, headers={"x-page-token": "t1"})
    assert status == 200


def test_empty_script_answers_500_naming_the_fix(server):
    status, _, body = call(server.url, body={})
    assert status == 500
    assert "server.script" in json.loads(body)["error"]["message"]


def test_unknown_route(server):
    status, _, body = call(server.url, path="/chat/completions", body={})
    assert status == 404 and "baseUrl should end in /v1" in json.loads(body)["error"]["message"]


def test_reply_rejects_unknown_fields():
    with pytest.raises(ValueError, match="txt"):
        Reply.model_validate({"txt": "typo"})


def test_standalone_with_a_script_file(tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "from a file", "usage": [1, 1]}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "tooling.provider_server", "--port", "0",
         "--script", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        url = re.search(r"http://[\d.:]+", line).group(0)
        status, _, body = call(url, body={"model": "m"})
        assert status == 200
        text = "".join(e["choices"][0]["delta"].get("content") or "" for e in data_events(body)
                       if e != "[DONE]" and e["choices"])
        assert text == "from a file"
    finally:
        process.terminate()
        process.wait(timeout=5)
