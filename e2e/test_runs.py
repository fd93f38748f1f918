"""Agent runs in real Chromium with the scripted model: tools over the shared files,
events, cancellation, and no request leaving the served origin. The page side of each row is
an export of e2e/pages/rows/runs.mjs."""

from urllib.parse import urlsplit

from e2e.conftest import call

TURNS = [
    {"text": "Reading the page's file. ", "toolCalls": [{"name": "read", "arguments": {"path": "seed/input.txt"}}]},
    {"text": "Writing the answer. ", "toolCalls": [
        {"name": "write", "arguments": {"path": "out/answer.md", "content": "# Answer\nseed said: 42\n"}},
        {"name": "edit", "arguments": {"path": "out/answer.md", "edits": [{"oldText": "42", "newText": "forty-two"}]}},
        {"name": "read", "arguments": {"path": "/etc/passwd"}}]},
    {"text": "All done: see out/answer.md."},
]


def test_scripted_turn_shares_files_with_the_page(app):
    r = call(app, "runs.scriptedTurnSharingFiles", TURNS)
    events = r["events"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert {e["runId"] for e in events} == {events[0]["runId"]}
    assert events[0]["type"] == "run_start" and events[-1]["type"] == "run_end"
    # h.subscribe hears the run's events and, besides, what its tool calls changed
    assert [t for t in r["seen"] if t != "file_change"] == [e["type"] for e in events]
    seen = r["seen"]
    assert seen.count("file_change") == 3  # out/ and out/answer.md by the write tool, then the edit
    assert seen.index("file_change") < seen.index("tool_end", seen.index("file_change"))
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["name"] for e in ends] == ["read", "write", "edit", "read"]
    assert "the answer is 42" in ends[0]["output"] and not ends[0]["isError"]
    assert ends[3]["isError"] and "EACCES" in ends[3]["output"]
    starts = [e for e in events if e["type"] == "tool_start"]
    assert starts[0]["arguments"] == {"path": "seed/input.txt"}
    assert r["answer"] == "# Answer\nseed said: forty-two\n"
    result = r["result"]
    assert (result["text"], result["stopReason"]) == ("All done: see out/answer.md.", "stop")
    assert (result["usage"]["requests"], result["usage"]["toolCalls"]) == (3, 4)
    text = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    assert text.startswith("Reading the page's file. Writing the answer. All done")
    assert [e["turn"] for e in events if e["type"] == "turn_end"] == [1, 2, 3]


def test_cancel_mid_run_then_a_second_prompt(app):
    r = call(app, "runs.cancelMidRunThenMore")
    assert r["first"]["stopReason"] == "aborted"
    assert r["first"]["text"].startswith("one two") and "twelve" not in r["first"]["text"]
    assert (r["second"]["text"], r["second"]["stopReason"]) == ("second run ok", "stop")
    assert r["third"]["stopReason"] == "aborted"
    assert (r["fourth"]["text"], r["fourth"]["stopReason"]) == ("third run ok", "stop")
    assert r["fifth"]["stopReason"] == "aborted" and r["sixth"]["stopReason"] == "aborted"


def test_errors_end_runs_with_typed_events(app):
    r = call(app, "runs.errorsEndingRuns")
    assert r["busy"]["stopReason"] == "error" and r["busy"]["error"]["code"] == "busy"
    end = next(e for e in r["events"] if e["type"] == "tool_end")
    assert end["isError"] and "not valid JSON" in end["output"]
    assert r["events"][-1]["stopReason"] == "stop"
    assert r["exhausted"]["stopReason"] == "error"
    assert r["exhausted"]["error"]["code"] == "script_exhausted"
    assert r["alive"] == []


def test_no_request_leaves_the_served_origin(app, server):
    call(app, "runs.promptAndWrite")
    origin = urlsplit(server.url).netloc
    assert app.requests, "the request log is empty"
    outside = [u for u in app.requests if urlsplit(u).netloc != origin]
    assert outside == []
    assert any(u.endswith("/pyharness/pyodide/pyodide.asm.wasm") for u in app.requests)
    assert any("pyharness-0.1.0-py3-none-any.whl" in u for u in app.requests)
    # jsonschema ships in the bundle for page tools but is not loaded at boot
    assert not any("jsonschema" in u for u in app.requests)
