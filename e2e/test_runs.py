"""Agent runs in real Chromium with the scripted model: tools over the shared files,
events, cancellation, and no request leaving the served origin."""

from urllib.parse import urlsplit

TURNS = """[
  {text: "Reading the page's file. ", toolCalls: [{name: "read", arguments: {path: "seed/input.txt"}}]},
  {text: "Writing the answer. ", toolCalls: [
     {name: "write", arguments: {path: "out/answer.md", content: "# Answer\\nseed said: 42\\n"}},
     {name: "edit", arguments: {path: "out/answer.md", edits: [{oldText: "42", newText: "forty-two"}]}},
     {name: "read", arguments: {path: "/etc/passwd"}}]},
  {text: "All done: see out/answer.md."}
]"""


def test_scripted_turn_shares_files_with_the_page(app):
    r = app.evaluate("""async (turns) => {
      const h = await boot({model: {api: "scripted", turns: eval(turns)}});
      await h.fs.mkdir("seed");
      await h.fs.writeFile("seed/input.txt", "the answer is 42\\n");
      const seen = [];
      h.subscribe((e) => seen.push(e.type));
      const run = h.prompt("Summarise seed/input.txt into out/answer.md");
      const events = [];
      for await (const e of run) events.push(e);
      const result = await run.done;
      const answer = await h.fs.readFile("out/answer.md", "utf8");
      h.close();
      return {events, result, answer, seen};
    }""", TURNS)
    events = r["events"]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert {e["runId"] for e in events} == {events[0]["runId"]}
    assert events[0]["type"] == "run_start" and events[-1]["type"] == "run_end"
    assert r["seen"] == [e["type"] for e in events]
    ends = [e for e in events if e["type"] == "tool_end"]
    assert [e["name"] for e in ends] == ["read", "write", "edit", "read"]
    assert "the answer is 42" in ends[0]["output"] and not ends[0]["isError"]
    assert ends[3]["isError"] and "EACCES" in ends[3]["output"]
    starts = [e for e in events if e["type"] == "tool_start"]
    assert starts[0]["arguments"] == {"path": "seed/input.txt"}
    assert r["answer"] == "# Answer\nseed said: forty-two\n"
    assert r["result"] == {"text": "All done: see out/answer.md.", "stopReason": "stop"}
    text = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    assert text.startswith("Reading the page's file. Writing the answer. All done")
    assert [e["turn"] for e in events if e["type"] == "turn_end"] == [1, 2, 3]


def test_cancel_mid_run_then_a_second_prompt(app):
    r = app.evaluate("""async () => {
      const h = await boot({model: {api: "scripted", turns: [
        {text: "one two three four five six seven eight nine ten eleven twelve", delayMs: 50},
        {text: "second run ok"},
        {text: "aborted by signal never finishes " .repeat(20), delayMs: 50},
        {text: "third run ok"},
        {text: "never shown", delayMs: 50}, {text: "never shown either", delayMs: 50},
      ]}});
      const run = h.prompt("long");
      let deltas = 0;
      for await (const e of run) {
        if (e.type === "text_delta" && ++deltas === 2) h.cancel();
      }
      const first = await run.done;
      const second = await h.prompt("again").done;
      const controller = new AbortController();
      const run3 = h.prompt("abortable", {signal: controller.signal});
      for await (const e of run3) if (e.type === "text_delta") { controller.abort(); break; }
      const third = await run3.done;
      const fourth = await h.prompt("last").done;
      const early = h.prompt("aborted before it starts", {signal: AbortSignal.abort()});
      const fifth = await early.done;
      const sixth = h.prompt("cancelled in the same tick");
      h.cancel();
      const sixthDone = await sixth.done;
      h.close();
      return {first, second, third, fourth, fifth, sixth: sixthDone};
    }""")
    assert r["first"]["stopReason"] == "aborted"
    assert r["first"]["text"].startswith("one two") and "twelve" not in r["first"]["text"]
    assert r["second"] == {"text": "second run ok", "stopReason": "stop"}
    assert r["third"]["stopReason"] == "aborted"
    assert r["fourth"] == {"text": "third run ok", "stopReason": "stop"}
    assert r["fifth"]["stopReason"] == "aborted" and r["sixth"]["stopReason"] == "aborted"


def test_errors_end_runs_with_typed_events(app):
    r = app.evaluate("""async () => {
      const h = await boot({model: {api: "scripted", turns: [
        {text: "slow", delayMs: 100}, {toolCalls: [{name: "write", arguments: "{broken"}]}, {text: "fine"}]}});
      const first = h.prompt("one");
      const busy = await h.prompt("two at once").done;
      await first.done;
      const run = h.prompt("bad args");
      const events = [];
      for await (const e of run) events.push(e);
      const exhausted = await h.prompt("no more turns").done;
      const alive = await h.fs.readdir(".");
      h.close();
      return {busy, events, exhausted, alive};
    }""")
    assert r["busy"]["stopReason"] == "error" and r["busy"]["error"]["code"] == "busy"
    end = next(e for e in r["events"] if e["type"] == "tool_end")
    assert end["isError"] and "not valid JSON" in end["output"]
    assert r["events"][-1]["stopReason"] == "stop"
    assert r["exhausted"]["stopReason"] == "error"
    assert r["exhausted"]["error"]["code"] == "script_exhausted"
    assert r["alive"] == []


def test_no_request_leaves_the_served_origin(app, server):
    app.evaluate("""async () => {
      const h = await boot({model: {api: "scripted", turns: [{text: "hi"}]}});
      await h.prompt("hello").done;
      await h.fs.writeFile("x", "y");
      h.close();
    }""")
    origin = urlsplit(server.url).netloc
    assert app.requests, "the request log is empty"
    outside = [u for u in app.requests if urlsplit(u).netloc != origin]
    assert outside == []
    assert any(u.endswith("/pyharness/pyodide/pyodide.asm.wasm") for u in app.requests)
    assert any("pyharness-0.1.0-py3-none-any.whl" in u for u in app.requests)
    # jsonschema ships in the bundle for page tools but is not loaded at boot
    assert not any("jsonschema" in u for u in app.requests)
