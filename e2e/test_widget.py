"""<pyharness-chat> in real Chromium, driven like a user: typing, Enter, tool cards, the
files panel (view, download, upload), cancel, boot failures, attributes (Markdown, its
safety and its bounds: test_markdown.py).
Also captures the screenshots the README shows (PYHARNESS_SCREENSHOTS=DIR keeps them).
The page side of the longer steps is in e2e/pages/rows/widget.mjs."""

import json
import os
from pathlib import Path

from e2e.conftest import call

CHAT = "pyharness-chat"


def mount(page, attributes=None, options=None, suggestions=None, wait=True):
    page.evaluate("([a, o, s]) => { mount(a, o, s); }", [attributes or {}, options or {}, suggestions or []])
    if wait:
        wait_state(page, "ready")


def wait_state(page, state):
    page.wait_for_function(f"document.querySelector('{CHAT}')?.dataset.state === '{state}'", timeout=60_000)


def send(page, text):
    """Type a prompt and press Enter; returns once the run has ended."""
    page.evaluate("window.lastResult = undefined")
    page.locator(f"{CHAT} textarea").fill(text)
    page.locator(f"{CHAT} textarea").press("Enter")
    page.wait_for_function("window.lastResult !== undefined", timeout=60_000)
    return page.evaluate("window.lastResult")


def scripted(*turns):
    return {"model": {"api": "scripted", "turns": list(turns)}}


WRITE_TURNS = scripted(
    {"text": "I'll write the file.", "toolCalls": [
        {"name": "write", "arguments": {"path": "out/hello.py", "content": "print('hello from the model')\n"}}]},
    {"text": "Done: **out/hello.py** prints a greeting.\n\n```python\nprint('hi')\n```", "delayMs": 20},
)


def test_send_streams_text_and_shows_a_tool_card(widget):
    mount(widget, {"heading": "Test agent"}, WRITE_TURNS)
    box = widget.locator(f"{CHAT} textarea")
    assert box.get_attribute("id") == "input"
    assert widget.locator(f"{CHAT} label[for=input]").inner_text() == "Message to the agent"
    # Shift+Enter is a newline, not a send
    box.fill("line one")
    box.press("Shift+Enter")
    box.type("line two")
    assert box.input_value() == "line one\nline two"
    assert widget.locator(f"{CHAT} .msg.user").count() == 0
    box.fill("")

    widget.evaluate("window.lastResult = undefined")
    box.fill("Write out/hello.py")
    box.press("Enter")
    # streamed: the text arrives in pieces while the run is going
    # and while it streams the Stop button shows (checked in one frame: the run may end
    # a moment later, so a second round trip could miss the streaming state)
    widget.wait_for_function(
        f"(() => {{ const r = document.querySelector('{CHAT}').shadowRoot;"
        " return r.querySelector('.md.streaming') && r.querySelector('.stop')?.checkVisibility(); })()")
    widget.wait_for_function("window.lastResult !== undefined", timeout=60_000)
    result = widget.evaluate("window.lastResult")
    assert result["stopReason"] == "stop"

    assert widget.locator(f"{CHAT} .msg.user .bubble").inner_text() == "Write out/hello.py"
    assert widget.locator(f"{CHAT} [role=log]").get_attribute("aria-live") == "polite"
    card = widget.locator(f"{CHAT} details.tool")
    assert card.count() == 1 and card.get_attribute("data-state") == "ok"
    assert card.locator(".tool-name").inner_text() == "write"
    assert card.locator(".tool-arg").inner_text() == "out/hello.py"
    card.locator("summary").click()
    assert "print('hello from the model')" in card.locator(".args").inner_text()
    assert "Wrote" in card.locator("pre.out").inner_text()
    answer = widget.locator(f"{CHAT} .md").last
    assert answer.locator("strong").inner_text() == "out/hello.py"
    assert answer.locator("pre code").inner_text() == "print('hi')"
    assert widget.locator(f"{CHAT} .send").is_visible()
    assert not widget.locator(f"{CHAT} .stop").is_visible()
    events = widget.evaluate("window.events")
    assert events[0]["type"] == "run_start" and events[-1]["type"] == "run_end"
    # keyboard focus is visible: Tab from the message box to the Plan toggle, then to
    # the labelled send button
    box.focus()
    widget.keyboard.press("Tab")
    assert call(widget, "widget.focusedOutline") == ["Plan first", "solid", "2px"]
    widget.keyboard.press("Tab")
    assert call(widget, "widget.focusedOutline") == ["Send", "solid", "2px"]


def test_a_file_written_by_the_model_appears_and_can_be_viewed(widget):
    mount(widget, {}, WRITE_TURNS)
    assert "No files yet" in widget.locator(f"{CHAT} .tree").inner_text()
    send(widget, "Write out/hello.py")
    entry = widget.locator(f"{CHAT} .entry.file[data-path='out/hello.py']")
    entry.wait_for()
    assert "fresh" in entry.get_attribute("class")  # changed by the last run
    assert widget.locator(f"{CHAT} .entry.dir[data-path='out']").count() == 1
    entry.click()
    viewer = widget.locator(f"{CHAT} .viewer")
    viewer.locator("pre").wait_for()
    assert viewer.locator(".vpath").inner_text() == "out/hello.py"
    assert viewer.locator("pre").inner_text() == "print('hello from the model')\n"
    with widget.expect_download() as download:
        viewer.get_by_label("Download this file").click()
    assert download.value.suggested_filename == "hello.py"
    assert Path(download.value.path()).read_text() == "print('hello from the model')\n"
    viewer.get_by_label("Close the file").click()
    assert not viewer.is_visible()


def test_upload_seeds_a_file_the_model_reads(widget, tmp_path):
    mount(widget, {}, scripted(
        {"toolCalls": [{"name": "read", "arguments": {"path": "numbers.csv"}}]},
        {"text": "The file has three numbers."},
    ))
    upload = tmp_path / "numbers.csv"
    upload.write_text("n\n1\n2\n3\n")
    widget.locator(f"{CHAT} .files input[type=file]").set_input_files(str(upload))
    widget.locator(f"{CHAT} .entry.file[data-path='numbers.csv']").wait_for()
    assert "Uploaded numbers.csv" in widget.locator(f"{CHAT} .files-foot").inner_text()
    assert send(widget, "How many numbers are in numbers.csv?")["stopReason"] == "stop"
    card = widget.locator(f"{CHAT} details.tool")
    assert card.get_attribute("data-state") == "ok"
    card.locator("summary").click()
    assert "1\n2\n3" in card.locator("pre.out").inner_text()


def test_cancel_stops_a_run_and_errors_say_what_to_do(widget):
    mount(widget, {}, scripted(
        {"text": "counting " + " ".join(str(i) for i in range(200)), "delayMs": 40},
        {"text": "second run ok"},
    ))
    widget.evaluate("window.lastResult = undefined")
    widget.locator(f"{CHAT} textarea").fill("count slowly")
    widget.locator(f"{CHAT} textarea").press("Enter")
    widget.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('.md')?.textContent.includes('3')")
    widget.locator(f"{CHAT}").get_by_label("Cancel the run").click()
    widget.wait_for_function("window.lastResult !== undefined", timeout=30_000)
    assert widget.evaluate("window.lastResult.stopReason") == "aborted"
    assert "199" not in widget.locator(f"{CHAT} .md").first.inner_text()
    assert "Cancelled" in widget.locator(f"{CHAT} .meta").inner_text()
    assert send(widget, "again")["text"] == "second run ok"
    # the script is used up: the widget says why and what to do
    result = send(widget, "and again")
    assert result["error"]["code"] == "script_exhausted"
    notice = widget.locator(f"{CHAT} .notice.error")
    assert notice.get_attribute("role") == "alert"
    assert "no turns left" in notice.inner_text() and "real model" in notice.inner_text()


def test_a_boot_failure_shows_a_readable_error(widget):
    mount(widget, {"api": "scripted", "bundle-url": "/nowhere/"}, {}, wait=False)
    wait_state(widget, "error")
    notice = widget.locator(f"{CHAT} .notice.error")
    text = notice.inner_text()
    assert "could not start (step 'worker')" in text
    assert "bundle-url" in text and "/nowhere/worker.mjs" in text
    assert "answered 404" in text  # the cause, as createHarness's EBOOT names it
    assert notice.get_by_role("button", name="Try again").is_visible()
    assert widget.evaluate("window.bootError").startswith("pyharness failed to start")
    assert widget.locator(f"{CHAT} .send").is_disabled()
    # no model at all: no boot, a notice naming the attributes to set
    mount(widget, {}, {}, wait=False)
    wait_state(widget, "error")
    assert "set the api and model attributes" in widget.locator(f"{CHAT} .notice.error").inner_text()


def test_attributes_and_the_options_property_configure_the_harness(widget, provider):
    provider.script([{"text": "Hello from the provider."}])
    call(widget, "widget.addPromptScript", "agent-prompt", "You are the test agent.")
    mount(widget, {"api": "openai-chat", "base-url": provider.base_url, "model": "gpt-test",
                   "system-prompt-from": "#agent-prompt", "shell": True, "max-steps": "5"},
          {"model": {"apiKey": "sk-from-property"}})
    tools = widget.evaluate(f"document.querySelector('{CHAT}').harness.tools.map((t) => t.name)")
    assert "bash" in tools
    assert "bash" in widget.locator(f"{CHAT} .chips").inner_text()
    assert widget.locator(f"{CHAT} .model").inner_text() == "gpt-test"
    assert send(widget, "hi")["text"] == "Hello from the provider."
    request = next(r for r in provider.requests if r.method == "POST")
    assert request.headers["authorization"] == "Bearer sk-from-property"
    assert request.body["model"] == "gpt-test"
    assert request.body["messages"][0]["content"].startswith("You are the test agent.")
    assert widget.locator(f"{CHAT} .md").last.inner_text() == "Hello from the provider."


def test_screenshots_mid_conversation_and_after_a_tool_call(widget, tmp_path):
    """The README's picture: the demo's conversation in the widget. Kept in
    $PYHARNESS_SCREENSHOTS when set (`make screenshots` writes docs/)."""
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    widget.set_viewport_size({"width": 1088, "height": 860})
    widget.add_style_tag(content="pyharness-chat { height: 780px; }")
    call(widget, "widget.mountTheDemo")
    widget.wait_for_function("document.body.dataset.seeded === 'yes'", timeout=60_000)
    chat = widget.locator(CHAT)
    chat.locator(".suggestion").first.click()
    # mid-conversation: the answer streams in after the tool calls
    widget.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('.md.streaming')?.textContent.includes('What I did')", timeout=60_000)
    chat.screenshot(path=str(out / "widget-streaming.png"))
    wait_state(widget, "ready")
    chat.locator(".entry.file[data-path='report.md']").click()
    chat.locator(".viewer pre").wait_for()
    chat.locator("details.tool[data-tool=bash]").first.locator("summary").click()
    chat.locator("[role=log]").evaluate("(log) => { log.style.scrollBehavior = 'auto'; log.scrollTop = 0; }")
    widget.wait_for_timeout(300)  # the chevron's transition
    chat.screenshot(path=str(out / "widget.png"))
    for name in ("widget-streaming.png", "widget.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and 20_000 < len(data) < 400_000, (name, len(data))
    cards = chat.locator("details.tool")
    assert [c.get_attribute("data-state") for c in cards.all()] == ["ok"] * 6
    assert "| East | 350 |" in chat.locator(".viewer pre").inner_text()
    print(json.dumps({"screenshots": str(out)}))
