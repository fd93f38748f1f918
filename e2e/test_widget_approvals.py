"""The widget's approval panel, used as a user would: a permission rule from the
`permissions` attribute asks, the panel shows the call (and for write/edit the diff)
inline under its tool card, and the user answers by mouse or keyboard (focus on Allow
once, Tab between the buttons, Enter or Space presses, Escape denies). The screenshot
is kept in $PYHARNESS_SCREENSHOTS when set."""

import json
import os
from pathlib import Path

from e2e.test_widget import CHAT, mount, scripted, wait_state

PANEL = f"{CHAT} .approval[data-state=asking]"


def write(path, content):
    return {"toolCalls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def edit(path, old, new):
    return {"toolCalls": [{"name": "edit", "arguments": {
        "path": path, "edits": [{"oldText": old, "newText": new}]}}]}


def active_button(page):
    return page.evaluate(f"document.querySelector('{CHAT}').shadowRoot.activeElement?.textContent")


def test_the_user_answers_in_the_run_by_mouse_and_keyboard(widget, tmp_path):
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    widget.set_viewport_size({"width": 900, "height": 900})
    widget.add_style_tag(content="pyharness-chat { height: 860px; }")
    rules = {"write": {"*": "ask", "docs/**": "allow"}, "edit": "ask", "read": "allow"}
    mount(widget, {"permissions": json.dumps(rules)}, scripted(
        write("notes.txt", "one\ntwo\nthree\n"),
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
        edit("notes.txt", "two", "TWO"),
        write("other.txt", "by keyboard\n"),
        write("more.txt", "covered by always\n"),
        write("docs/a.md", "allowed by its pattern\n"),
        edit("notes.txt", "one", "ONE"),
        {"text": "done"},
    ))
    chat = widget.locator(CHAT)
    chat.locator("textarea").fill("go")
    chat.locator("textarea").press("Enter")

    # 1: a new file, answered by mouse
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=60_000)
    assert "Allow write on notes.txt?" in panel.locator(".approval-title").inner_text()
    assert panel.locator(".approval-rule").inner_text() == 'Rule: write: "*"'
    assert "+one" in panel.locator(".approval-diff").inner_text()
    assert active_button(widget) == "Allow once"  # the panel took focus
    # inline in the run: right under its tool card
    assert panel.evaluate("(p) => p.previousElementSibling.matches('details.tool')")
    panel.get_by_role("button", name="Allow once").click()

    # 2: an edit, with its diff; the screenshot; then Tab Tab Enter is Deny
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=30_000)
    diff = panel.locator(".approval-diff").inner_text()
    assert "-two" in diff and "+TWO" in diff and "three" in diff
    assert widget.locator(f"{PANEL} .dl.add").inner_text() == "+TWO"
    chat.screenshot(path=str(out / "widget-approval.png"))
    assert active_button(widget) == "Allow once"
    widget.keyboard.press("Tab")
    widget.keyboard.press("Tab")
    assert active_button(widget) == "Deny"
    widget.keyboard.press("Enter")

    # 3: Tab to Always, Space; 4 is then covered without asking; 5 allowed by its pattern
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=30_000)
    assert "other.txt" in panel.locator(".approval-title").inner_text()
    widget.keyboard.press("Tab")
    widget.keyboard.press("Space")

    # 6: an edit (its own rule: the write's "always" does not cover it); Escape denies
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=30_000)
    assert "Allow edit on notes.txt?" in panel.locator(".approval-title").inner_text()
    widget.keyboard.press("Escape")
    wait_state(widget, "ready")

    panels = chat.locator(".approval")
    assert [p.get_attribute("data-state") for p in panels.all()] == ["once", "deny", "always", "deny"]
    assert panels.nth(1).locator(".approval-status").inner_text() == "Denied"
    assert all(b.is_disabled() for b in panels.nth(0).locator("button").all())
    cards = chat.locator("details.tool")
    assert [c.get_attribute("data-state") for c in cards.all()] == [
        "ok", "ok", "error", "ok", "ok", "ok", "error"]
    fs = f"document.querySelector('{CHAT}').harness.fs"
    assert widget.evaluate(f"{fs}.readFile('notes.txt', 'utf8')") == "one\ntwo\nthree\n"
    for path in ("other.txt", "more.txt", "docs/a.md"):
        assert widget.evaluate(f"{fs}.stat('{path}').then(() => true, () => false)"), path
    data = (out / "widget-approval.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
