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


def _escaped(text):
    """What the panel shows for `text`: each invisible character as ⟨U+XXXX⟩, newlines
    kept as line breaks (embed/widget/widget-dom.mjs)."""
    hidden = {"\r", "\t", "\x1b", "\x07", "\u202e", "\u200b", "\u2066", "\ufeff"}
    return "".join(f"⟨U+{ord(c):04X}⟩" if c in hidden else c for c in text)


def test_a_long_command_is_shown_whole_and_escaped_before_the_buttons(widget):
    """Issue 28: a 5,000-character command whose end is `; rm -f …`, with control, bidi
    and zero-width characters: the panel shows all of it, wrapped, in a box that
    scrolls, every hidden character visible, before any of its buttons."""
    filler = "echo " + " ".join(f"harmless-{i:04}" for i in range(330))
    command = (f"{filler}\r\x1b[2Kecho ok\t\u202e\u200b # looks done\n"
               f"\u2066printf '\x07'\ufeff ; rm -f important.txt")
    command = command[:5] + "x" * (5000 - len(command)) + command[5:]
    assert len(command) == 5000
    widget.set_viewport_size({"width": 800, "height": 800})
    widget.add_style_tag(content="pyharness-chat { height: 760px; }")
    mount(widget, {"permissions": json.dumps({"bash": "ask"}), "shell": True}, scripted(
        {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}, {"text": "done"}))
    fs = f"document.querySelector('{CHAT}').harness.fs"
    widget.evaluate(f"{fs}.writeFile('important.txt', 'keep me')")
    chat = widget.locator(CHAT)
    chat.locator("textarea").fill("go")
    chat.locator("textarea").press("Enter")
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=60_000)

    seen = panel.evaluate("""(p) => {
      const box = p.querySelector('.approval-command');
      const actions = p.querySelector('.approval-actions');
      const style = getComputedStyle(box);
      const before = box.compareDocumentPosition(actions) & Node.DOCUMENT_POSITION_FOLLOWING;
      box.scrollTop = box.scrollHeight;  // the user scrolls to its end
      const range = document.createRange();
      const last = box.lastChild;
      range.setStart(last, Math.max(0, last.length - 10));
      range.setEnd(last, last.length);
      const tail = range.getBoundingClientRect(), frame = box.getBoundingClientRect();
      return {
        text: box.textContent, title: p.querySelector('.approval-title').textContent,
        before: before !== 0, hidden: box.querySelectorAll('.hidden-char').length,
        whiteSpace: style.whiteSpace, overflowY: style.overflowY,
        scrolls: box.scrollHeight > box.clientHeight, wraps: box.scrollWidth <= box.clientWidth,
        tailVisible: tail.top >= frame.top - 1 && tail.bottom <= frame.bottom + 1,
        label: box.getAttribute('aria-label'), focusable: box.tabIndex === 0,
      };
    }""")
    assert seen["text"] == _escaped(command)  # whole: not one character cut
    assert seen["text"].endswith("; rm -f important.txt")
    assert seen["hidden"] == 8  # \r \x1b \t U+202E U+200B U+2066 \x07 U+FEFF
    assert seen["before"], "the command comes before the buttons"
    assert seen["whiteSpace"] == "pre-wrap" and seen["overflowY"] == "auto"
    assert seen["scrolls"] and seen["wraps"] and seen["tailVisible"]
    assert seen["focusable"] and "5,000 characters" in seen["label"]
    assert seen["title"] == "Allow bash to run this command?"
    # keyboard: the box is in the tab order, just before the first button
    assert active_button(widget) == "Allow once"
    widget.keyboard.press("Shift+Tab")
    assert widget.evaluate(
        f"document.querySelector('{CHAT}').shadowRoot.activeElement?.className") == "approval-command"
    panel.get_by_role("button", name="Deny").click()
    wait_state(widget, "ready")
    assert widget.evaluate(f"{fs}.readFile('important.txt', 'utf8')") == "keep me"


def test_a_name_with_newlines_cannot_forge_diff_lines_in_the_panel(widget):
    name = "a.txt\n+++ b.txt\n@@ -0,0 +1 @@\n+harmless"
    mount(widget, {"permissions": json.dumps({"write": "ask"})}, scripted(
        write(name, "rm -rf ~\n"), {"text": "done"}))
    chat = widget.locator(CHAT)
    chat.locator("textarea").fill("go")
    chat.locator("textarea").press("Enter")
    panel = widget.locator(PANEL)
    panel.wait_for(timeout=60_000)
    assert "⟨U+000A⟩" in panel.locator(".approval-title").inner_text()
    kinds = panel.evaluate("(p) => [...p.querySelectorAll('.dl')].map((l) => l.className)")
    assert kinds == ["dl ctx", "dl ctx", "dl hunk", "dl add"]  # one added line, no more
    assert panel.locator(".dl.add").inner_text() == "+rm -rf ~"
    panel.get_by_role("button", name="Deny").click()
    wait_state(widget, "ready")
