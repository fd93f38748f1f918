"""Subagents in <pyharness-chat>, driven like a user: each subagent drawn as a
collapsible card inside its task call's card (its text and its own tool cards), opened
and closed with the mouse and the keyboard; the parent's "Undo this run" offered for what
its subagents wrote, and each subagent's own "Undo this subagent" (one reverted alone);
no axe-core violation. The screenshot is kept in
$PYHARNESS_SCREENSHOTS when set."""

import os
from pathlib import Path

from e2e.conftest import axe_violations
from e2e.test_subagents import TWO
from e2e.test_widget import CHAT, mount, send


def test_subagent_cards_inside_the_task_cards(widget, tmp_path):
    mount(widget, {"heading": "Subagents"}, {"model": {"api": "scripted", "turns": TWO},
                                              "subagents": True})
    assert send(widget, "Write both files")["stopReason"] == "stop"
    chat = widget.locator(CHAT)
    tasks = chat.locator("details.tool[data-tool=task]")
    assert tasks.count() == 2
    texts = set()
    for i in range(2):
        card = tasks.nth(i)
        assert card.get_attribute("open") == "" and card.get_attribute("data-state") == "ok"
        sub = card.locator("details.subagent-card")
        assert sub.count() == 1 and sub.get_attribute("data-depth") == "1"
        assert sub.locator("details.tool[data-tool=write]").count() == 1
        texts.add(sub.locator(".md").last.inner_text())
    assert texts == {"wrote one", "wrote the other"}
    assert chat.locator(".md").last.inner_text() == "Both done."
    # the subagents' files can be undone with the run, and each subagent's alone
    assert chat.locator(".undo-open").count() == 3
    assert tasks.nth(0).locator(".undo-open").inner_text() == "Undo this subagent"
    assert axe_violations(widget) == []
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.screenshot(path=str(out / "widget-subagents.png"))
    # the mouse closes a subagent's card, the keyboard opens it again
    first = tasks.nth(0).locator("details.subagent-card")
    first.locator(":scope > summary").click()
    assert first.get_attribute("open") is None
    first.locator(":scope > summary").focus()
    widget.keyboard.press("Enter")
    assert first.get_attribute("open") == ""
    # one subagent's own undo: what it changed (one file), then Revert takes back that alone
    first.locator(".undo-open").click()
    panel = first.locator(".undo")
    panel.locator(".undo-list li").first.wait_for()
    assert panel.locator(".undo-list li").count() == 1
    gone = panel.locator(".undo-path").inner_text()
    panel.get_by_role("button", name="Revert").click()
    first.locator(".undo[data-state=reverted]").wait_for()
    assert panel.locator(".undo-status").inner_text() == "Reverted: 1 path restored."
    left = widget.evaluate(f"async () => (await document.querySelector('{CHAT}')"
                           ".harness.fs.readdir('.')).map((e) => e.name).sort()")
    assert left == sorted({"a.txt", "b.txt"} - {gone})
