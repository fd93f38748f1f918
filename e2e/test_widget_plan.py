"""Plan mode in <pyharness-chat>, driven like a user: the composer's Plan toggle (mouse),
a plan run that changes nothing, the plan shown for review, edited and run with the
keyboard (Ctrl+Enter), and the edited plan given to the model. The screenshot is kept
in $PYHARNESS_SCREENSHOTS when set."""

import os
from pathlib import Path

from e2e.conftest import axe_violations
from e2e.test_widget import CHAT, mount, send

PLAN = "1. Write hello.txt with a greeting.\n2. Read it back."
OPTIONS = {"model": {"api": "scripted", "turns": [
    {"text": "Let me look first.", "toolCalls": [{"name": "ls", "arguments": {}}]},
    {"text": PLAN},
    {"toolCalls": [{"name": "write", "arguments": {"path": "hello.txt", "content": "hi\n"}}]},
    {"text": "Done: hello.txt says hi."},
]}}


def test_plan_review_and_run_with_mouse_and_keyboard(widget, tmp_path):
    mount(widget, {"heading": "Plan"}, OPTIONS)
    chat = widget.locator(CHAT)
    toggle = chat.locator("button.plan-toggle")
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    result = send(widget, "Add a greeting file")
    assert result["stopReason"] == "stop"
    box = chat.locator(".plan-box")
    area = box.locator("textarea.plan-text")
    assert area.input_value() == PLAN
    assert widget.evaluate(
        "document.querySelector('pyharness-chat').harness.fs.readdir('.')"
        ".then((d) => d.map((e) => e.name))") == []  # nothing changed while planning
    starts = widget.evaluate("window.events.filter((e) => e.type === 'run_start')")
    assert starts[-1]["mode"] == "plan"
    assert axe_violations(widget) == []  # the plan review, with the toggle pressed
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.screenshot(path=str(out / "widget-plan.png"))
    # the keyboard: into the plan, add a step, Ctrl+Enter runs it
    toggle.click()  # plan mode off for the run of the plan (it runs with the normal tools)
    area.focus()
    area.press("End")
    widget.keyboard.press("Control+End")
    widget.keyboard.type("\n3. Say it is done.")
    widget.evaluate("window.lastResult = undefined")
    area.press("Control+Enter")
    widget.wait_for_function("window.lastResult !== undefined", timeout=60_000)
    assert widget.evaluate("window.lastResult")["stopReason"] == "stop"
    assert box.locator("button.approval-button").is_disabled() and area.get_attribute("readonly") == ""
    starts = widget.evaluate("window.events.filter((e) => e.type === 'run_start')")
    assert starts[-1]["plan"] == PLAN + "\n3. Say it is done." and "mode" not in starts[-1]
    assert widget.evaluate(
        "document.querySelector('pyharness-chat').harness.fs.readFile('hello.txt', 'utf8')") == "hi\n"
    assert chat.locator(".md").last.inner_text() == "Done: hello.txt says hi."
    assert axe_violations(widget) == []  # the plan run, its spent review
