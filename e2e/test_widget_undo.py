""""Undo this run" in the widget, as a user would: a run edits a file and deletes another
(a shell command); the button under the finished run shows what it changed (the edit's
diff) and Revert, pressed by the keyboard, takes it back: the deleted file returns (in
the files panel too, from the revert's file_change events) and the edit is undone. The
screenshot is kept in $PYHARNESS_SCREENSHOTS when set."""

import json
import os
from pathlib import Path

from e2e.test_widget import CHAT, mount, scripted, wait_state

FS = f"document.querySelector('{CHAT}').harness.fs"


def test_undo_this_run_restores_a_deleted_file_and_undoes_an_edit(widget, tmp_path):
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    widget.set_viewport_size({"width": 900, "height": 900})
    widget.add_style_tag(content="pyharness-chat { height: 860px; }")
    mount(widget, {"shell": True}, scripted(
        {"toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {
            "path": "notes.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": "rm old.txt"}}]},
        {"text": "Edited notes.txt and removed old.txt."},
    ))
    widget.evaluate(f"{FS}.writeFile('notes.txt', 'one\\ntwo\\nthree\\n')")
    widget.evaluate(f"{FS}.writeFile('old.txt', 'keep me\\n')")
    chat = widget.locator(CHAT)
    chat.locator("textarea").fill("tidy up")
    chat.locator("textarea").press("Enter")
    wait_state(widget, "ready")
    assert not widget.evaluate(f"{FS}.stat('old.txt').then(() => true, () => false)")

    chat.get_by_role("button", name="Undo this run").click()
    listing = chat.locator(".undo-list")
    listing.wait_for()
    items = {li.locator(".undo-path").inner_text(): li.get_attribute("data-kind")
             for li in listing.locator("li").all()}
    assert items == {"notes.txt": "modified", "old.txt": "deleted"}
    diff = listing.locator("li[data-kind=modified] .approval-diff").inner_text()
    assert "-two" in diff and "+TWO" in diff
    chat.screenshot(path=str(out / "widget-undo.png"))
    focused = widget.evaluate(f"document.querySelector('{CHAT}').shadowRoot.activeElement?.textContent")
    assert focused == "Revert"
    widget.keyboard.press("Enter")
    chat.locator(".undo[data-state=reverted]").wait_for()
    assert "Reverted: 2 paths restored." in chat.locator(".undo .undo-status").inner_text()
    assert widget.evaluate(f"{FS}.readFile('old.txt', 'utf8')") == "keep me\n"
    assert widget.evaluate(f"{FS}.readFile('notes.txt', 'utf8')") == "one\ntwo\nthree\n"
    chat.locator(".entry.file[data-path='old.txt']").wait_for()  # the files panel, told
    assert not chat.get_by_role("button", name="Undo this run").is_visible()


def test_undo_never_takes_back_the_users_edit_made_while_the_run_waited(widget):
    """The user edits a file the run wrote while the run waits on an approval: "Undo this
    run" says which path changed and reverts nothing, and "Revert later runs too" cannot
    take the user's edit back either."""
    rules = {"write": {"*": "allow", "last.txt": "ask"}, "read": "allow"}
    mount(widget, {"permissions": json.dumps(rules)}, scripted(
        {"toolCalls": [{"name": "write", "arguments": {"path": "notes.txt",
                                                       "content": "by the run\n"}}]},
        {"toolCalls": [{"name": "write", "arguments": {"path": "last.txt", "content": "x\n"}}]},
        {"text": "Wrote notes.txt and last.txt."},
    ))
    chat = widget.locator(CHAT)
    chat.locator("textarea").fill("write")
    chat.locator("textarea").press("Enter")
    panel = widget.locator(f"{CHAT} .approval[data-state=asking]")
    panel.wait_for(timeout=60_000)
    widget.evaluate(f"{FS}.writeFile('notes.txt', 'the user typed this\\n')")  # meanwhile
    panel.get_by_role("button", name="Allow once").click()
    wait_state(widget, "ready")

    chat.get_by_role("button", name="Undo this run").click()
    chat.locator(".undo-list").wait_for()
    chat.get_by_role("button", name="Revert").click()
    status = chat.locator(".undo .undo-status")
    status.filter(has_text="Not reverted").wait_for()
    assert "/work/notes.txt" in status.inner_text()
    assert widget.evaluate(f"{FS}.readFile('notes.txt', 'utf8')") == "the user typed this\n"
    assert widget.evaluate(f"{FS}.readFile('last.txt', 'utf8')") == "x\n"
    chat.get_by_role("button", name="Revert later runs too").click()
    chat.locator(".undo[data-state=failed]").wait_for()
    assert "ECONFLICT" in chat.locator(".undo .undo-status").inner_text()
    assert widget.evaluate(f"{FS}.readFile('notes.txt', 'utf8')") == "the user typed this\n"
    assert widget.evaluate(f"{FS}.readFile('last.txt', 'utf8')") == "x\n"
