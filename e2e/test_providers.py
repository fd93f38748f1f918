"""Real wire formats in real Chromium: the worker's fetch (or the page's) streams from the
scripted provider server on loopback; page tools; retries; cancellation. The page side of
each row is an export of e2e/pages/rows/providers.mjs, given the model to boot with."""

import json

from e2e.conftest import call


def openai(provider):
    return {"api": "openai-chat", "baseUrl": provider.base_url, "apiKey": "sk-test",
            "model": "gpt-test"}


def anthropic(provider):
    return {"api": "anthropic-messages", "baseUrl": provider.base_url, "apiKey": "ak-test",
            "model": "claude-test"}


def posts(provider):
    """The model requests the server got (a browser also sends CORS preflights)."""
    return [r for r in provider.requests if r.method == "POST"]


def test_openai_chat_turn_with_a_tool_call(app, provider):
    provider.script([
        {"text": "Let me write it. ", "toolCalls": [["write", {"path": "a.txt", "content": "é!"}]],
         "chunkSize": 7},
        {"text": "Wrote a.txt — done.", "reasoning": "all good", "usage": [30, 7]},
    ])
    r = call(app, "providers.turnWithAWrite", openai(provider))
    assert r["file"] == "é!"
    assert r["done"]["text"] == "Wrote a.txt — done." and r["done"]["stopReason"] == "stop"
    assert r["done"]["usage"]["inputTokens"] >= 30
    types = [e["type"] for e in r["events"]]
    assert "reasoning_delta" in types and "tool_end" in types
    second = posts(provider)[1]
    assert second.headers["authorization"] == "Bearer sk-test"
    assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "tool"]
    assert {t["function"]["name"] for t in second.body["tools"]} >= {"read", "write", "edit"}


def test_anthropic_messages_turn_with_a_tool_call(app, provider):
    provider.script([
        {"toolCalls": [["ls", {}]]},
        {"text": "The workspace has seed.txt."},
    ])
    r = call(app, "providers.turnWithAnLs", anthropic(provider))
    assert r["done"]["text"] == "The workspace has seed.txt."
    end = next(e for e in r["events"] if e["type"] == "tool_end")
    assert end["name"] == "ls" and "seed.txt" in end["output"]
    first = posts(provider)[0]
    assert first.path == "/v1/messages"
    assert first.headers["x-api-key"] == "ak-test"
    assert first.headers["anthropic-dangerous-direct-browser-access"] == "true"
    assert posts(provider)[1].body["messages"][-1]["content"][0]["type"] == "tool_result"


def test_page_fetch_carries_the_request(app, provider):
    provider.script([{"text": "via the page", "requireHeaders": {"x-page-auth": "secret"}},
                     {"text": "never", "requireHeaders": {"x-page-auth": "secret"}}])
    r = call(app, "providers.pageFetchThenDirect", openai(provider))
    assert r["done"]["text"] == "via the page" and r["proxied"] == 1
    assert r["direct"]["stopReason"] == "error"
    assert "API key" in r["direct"]["error"]["message"] or "401" in r["direct"]["error"]["message"]


def test_429_with_retry_after_then_success_and_401_message(app, provider):
    provider.script([{"status": 429, "retryAfter": "1", "error": "slow down"},
                     {"text": "after the retry"},
                     {"status": 401, "error": "invalid x-api-key"}])
    r = call(app, "providers.twoPromptsTimed", anthropic(provider))
    assert r["first"]["text"] == "after the retry" and r["waited"] >= 900
    assert r["second"]["stopReason"] == "error"
    assert "invalid x-api-key" in r["second"]["error"]["message"]
    assert "apiKey" in r["second"]["error"]["message"]
    assert len(posts(provider)) == 3  # 401 is not retried


def test_page_tools(app, provider):
    provider.script([
        {"toolCalls": [["save_note", {"text": "hello"}], ["save_note", {"text": 5}],
                       ["explode", {}], ["hang", {}], ["read", {"path": "x"}]]},
        {"text": "tools done"},
    ])
    r = call(app, "providers.pageTools", openai(provider))
    ends = [e for e in r["events"] if e["type"] == "tool_end"]
    assert json.loads(ends[0]["output"]) == {"saved": 5, "aborted": False}
    assert not ends[0]["isError"] and r["note"] == "hello"
    assert ends[1]["isError"] and "text" in ends[1]["output"] and "not of type 'string'" in ends[1]["output"]
    assert ends[2]["isError"] and ends[2]["output"] == "kaboom from the page"
    assert ends[3]["isError"] and "did not answer within 300 ms" in ends[3]["output"]
    assert r["hangAborted"]
    assert ends[4]["output"] == "page read wins"
    assert r["names"].count("read") == 1
    assert r["done"]["text"] == "tools done"
    tools = {t["function"]["name"]: t["function"] for t in posts(provider)[0].body["tools"]}
    assert tools["read"]["description"] == "the page's own read"
    assert tools["save_note"]["parameters"]["required"] == ["text"]


def test_cancel_mid_stream_then_a_new_prompt(app, provider):
    provider.script([
        {"text": " ".join(f"word{i}" for i in range(200)), "eventDelayS": 0.02},
        {"text": "fresh answer"},
    ])
    r = call(app, "providers.cancelThenPrompt", anthropic(provider))
    assert r["first"]["stopReason"] == "aborted"
    assert r["first"]["text"].startswith("word0") and "word199" not in r["first"]["text"]
    assert r["second"] == {"text": "fresh answer", "stopReason": "stop",
                           "usage": r["second"]["usage"]}
    history = posts(provider)[1].body["messages"]
    assert history[1]["role"] == "assistant"  # the partial text stayed in the history
    assert history[1]["content"][0]["text"].startswith("word0")
