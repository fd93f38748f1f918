"""A second tab of a widget page, in real Chromium (two pages of one browser context share
the origin's OPFS and Web Locks): it is told plainly that the workspace is open
elsewhere and that it works in memory, and it can take the workspace over; the first
tab saves, lets go, says so, and can take it back."""

from typing import Any

from .test_widget import CHAT, mount, scripted, send, wait_state

WRITE = scripted(
    {"text": "Writing.", "toolCalls": [
        {"name": "write", "arguments": {"path": "first.txt", "content": "from the first tab\n"}}]},
    {"text": "Written."})


def open_tab(context: Any, server: Any) -> Any:
    page = context.new_page()
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{server.url}/widget.html")
    page.wait_for_function("document.body.dataset.loaded === 'yes'")
    return page


def notice(page: Any, title: str) -> Any:
    box = page.locator(f"{CHAT} .notice", has_text=title)
    box.wait_for(timeout=30_000)
    return box


def test_the_second_tab_is_told_and_can_take_the_workspace_over(page: Any, server: Any) -> None:
    first = open_tab(page.context, server)
    mount(first, {}, WRITE)
    send(first, "write a file")
    first.locator(f"{CHAT} .entry.file[data-path='first.txt']").wait_for()

    second = open_tab(page.context, server)
    mount(second, {}, scripted({"text": "hello"}))
    told = notice(second, "This workspace is open in another tab")
    assert "kept in memory only" in told.inner_text()
    assert "in memory" in second.locator(f"{CHAT} .status").inner_text().lower()
    assert second.evaluate(f"document.querySelector('{CHAT}').harness.storage.kind") == "memory"
    second.screenshot(path="/tmp/second-tab-told.png")

    told.get_by_role("button", name="Take it over here").click()
    wait_state(second, "ready")
    second.locator(f"{CHAT} .entry.file[data-path='first.txt']").wait_for()
    storage = second.evaluate(f"document.querySelector('{CHAT}').harness.storage")
    assert storage["kind"] == "opfs"
    text = second.evaluate(f"document.querySelector('{CHAT}').harness.fs.readFile('first.txt', 'utf8')")
    assert text == "from the first tab\n"

    lost = notice(first, "This workspace was taken over by another tab")
    assert "EBUSY" in lost.inner_text()
    first.screenshot(path="/tmp/first-tab-taken.png")
    # ...and takes it back.
    lost.get_by_role("button", name="Take it back").click()
    wait_state(first, "ready")
    notice(second, "This workspace was taken over by another tab")
    assert first.evaluate(f"document.querySelector('{CHAT}').harness.storage.kind") == "opfs"
