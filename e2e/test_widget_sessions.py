"""<pyharness-chat> over a persistent workspace in real Chromium: after a reload the
conversation is drawn again (prompts, text, tool cards, the files panel), a run cut off
by the reload shows as interrupted, and the thread list starts, switches and deletes
conversations. The page side of the longer steps is in e2e/pages/rows/widget.mjs."""

import pytest
from playwright.sync_api import expect

from e2e.conftest import call

from .test_widget import CHAT, mount, scripted, send, wait_state


def reload(page):
    page.reload()
    page.wait_for_function("document.body.dataset.loaded === 'yes'")


def log_text(page):
    return page.locator(f"{CHAT} [role=log]").inner_text()


def open_threads(page):
    page.locator(f"{CHAT}").get_by_role("button", name="Threads").click()
    panel = page.locator(f"{CHAT} .threads")
    panel.wait_for()
    return panel


def titles(panel):
    panel.locator(".thread").first.wait_for()
    return [t.strip() for t in panel.locator(".thread-title").all_inner_texts()]


def test_the_conversation_and_files_are_drawn_again_after_a_reload(widget, provider):
    mount(widget, {}, scripted(
        {"text": "I'll write the file.", "toolCalls": [
            {"name": "write", "arguments": {"path": "out/hello.py", "content": "print('hi')\n"}}]},
        {"text": "Done: **out/hello.py** prints a greeting."}))
    send(widget, "Write out/hello.py")
    before = widget.locator(f"{CHAT} .msg").count()

    reload(widget)
    provider.script([{"text": "It prints hi."}])
    mount(widget, {"api": "openai-chat", "base-url": provider.base_url, "model": "gpt-test"})
    assert widget.locator(f"{CHAT} .msg").count() == before == 2
    assert widget.locator(f"{CHAT} .msg.user .bubble").inner_text() == "Write out/hello.py"
    card = widget.locator(f"{CHAT} details.tool")
    assert card.count() == 1 and card.get_attribute("data-state") == "ok"
    assert card.locator(".tool-arg").inner_text() == "out/hello.py"
    card.locator("summary").click()
    assert "print('hi')" in card.locator(".args").inner_text()
    assert "Wrote" in card.locator("pre.out").inner_text()
    answer = widget.locator(f"{CHAT} .md").last
    answer.locator("strong").wait_for()
    assert answer.locator("strong").inner_text() == "out/hello.py"
    assert "I'll write the file." in log_text(widget)
    assert widget.locator(f"{CHAT} .empty").count() == 0  # no welcome over a conversation
    widget.locator(f"{CHAT} .entry.file[data-path='out/hello.py']").wait_for()
    # the thread list has the conversation, named after its first prompt
    assert titles(open_threads(widget)) == ["Write out/hello.py"]
    widget.keyboard.press("Escape")

    # the next prompt continues it: the model request carries the earlier turns
    send(widget, "What does it print?")
    assert widget.locator(f"{CHAT} .md").last.inner_text() == "It prints hi."
    request = next(r for r in provider.requests if r.method == "POST")
    contents = [m.get("content") for m in request.body["messages"]]
    assert contents[1] == "Write out/hello.py" and contents[-1] == "What does it print?"
    assert [m["role"] for m in request.body["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "user"]


def test_a_run_cut_off_by_a_reload_shows_as_interrupted(widget):
    mount(widget, {}, scripted(
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "a"}}]},
        {"text": "slowly " * 400, "delayMs": 50}))
    widget.locator(f"{CHAT} textarea").fill("Write a.txt then talk")
    widget.locator(f"{CHAT} textarea").press("Enter")
    widget.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('.md')?.textContent.includes('slowly')")

    reload(widget)
    mount(widget, {}, scripted({"text": "back"}))
    assert widget.locator(f"{CHAT} details.tool").get_attribute("data-state") == "ok"
    assert "Interrupted: the page was reloaded" in widget.locator(f"{CHAT} .meta").inner_text()
    assert send(widget, "go on")["text"] == "back"  # the history is valid for the model


def test_the_thread_list_starts_switches_and_deletes_conversations(widget):
    mount(widget, {}, scripted({"text": "first answer"}, {"text": "second answer"},
                               {"text": "first again"}))
    send(widget, "first question")
    panel = open_threads(widget)
    panel.get_by_role("button", name="New thread", exact=True).click()
    widget.locator(f"{CHAT} .empty").wait_for()  # a new thread starts with the welcome
    assert widget.locator(f"{CHAT} .msg").count() == 0
    send(widget, "second question")

    panel = open_threads(widget)
    assert titles(panel) == ["second question", "first question"]  # newest first
    assert panel.locator(".thread[aria-current=true] .thread-title").inner_text() == "second question"
    panel.locator(".thread", has_text="first question").click()
    widget.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('.msg.user .bubble')?.textContent === 'first question'")
    assert "second" not in log_text(widget)
    assert send(widget, "and again")["text"] == "first again"
    assert widget.locator(f"{CHAT} .msg.user").count() == 2

    # delete the other one: two clicks (the first asks)
    panel = open_threads(widget)
    delete = panel.locator("li", has_text="second question").locator(".delete")
    delete.click()
    assert delete.inner_text() == "Delete?"
    delete.click()
    panel.locator("li", has_text="second question").wait_for(state="detached")
    assert titles(panel) == ["first question"]
    # rename: the pencil makes the title a field; Enter saves, Escape cancels
    item = panel.locator("li", has_text="first question")
    item.hover()
    item.get_by_role("button", name="Rename thread first question").click()
    field = panel.get_by_role("textbox", name="Thread title")
    field.fill("Sales questions")
    field.press("Enter")
    panel.locator(".thread-title", has_text="Sales questions").wait_for()
    panel.locator("li", has_text="Sales questions").get_by_role("button", name="Rename thread Sales questions").click()
    panel.get_by_role("textbox", name="Thread title").fill("not this")
    panel.get_by_role("textbox", name="Thread title").press("Escape")
    assert titles(panel) == ["Sales questions"] and panel.is_visible()
    # "New thread" on a thread that is still empty does not make another one
    panel.get_by_role("button", name="New thread", exact=True).click()
    widget.locator(f"{CHAT} .empty").wait_for()
    panel = open_threads(widget)
    assert len(titles(panel)) == 2
    panel.get_by_role("button", name="New thread", exact=True).click()
    panel = open_threads(widget)
    assert len(titles(panel)) == 2
    panel.locator(".thread", has_text="Sales questions").click()
    widget.locator(f"{CHAT} .msg.user").first.wait_for()

    # after a reload the remaining thread is the current one, drawn again
    reload(widget)
    mount(widget, {}, scripted({"text": "x"}))
    assert [t.strip() for t in widget.locator(f"{CHAT} .msg.user .bubble").all_inner_texts()] == [
        "first question", "and again"]
    wait_state(widget, "ready")


@pytest.mark.parametrize("end", ["close", "kill"])
def test_everything_is_back_after_close_or_a_killed_worker(widget, provider, end):
    """close() + a new createHarness (the widget's restart()), or the worker killed right
    after the first tool_end: files, the thread, the view, and the next model request
    carries the earlier turns."""
    provider.script([
        {"text": "noted", "toolCalls": [["write", {"path": "n.txt", "content": "42"}], ["ls", {}]]},
        {"text": "I wrote n.txt"} if end == "close" else {"text": "it was 42"},
        {"text": "it was 42"}])
    mount(widget, {"api": "openai-chat", "base-url": provider.base_url, "model": "gpt-test"})
    if end == "close":
        send(widget, "remember 42")
    else:
        call(widget, "widget.sendAndKillAfterTheWrite", "remember 42")
        widget.wait_for_function(f"document.querySelector('{CHAT}').shadowRoot.querySelector('details.tool[data-state=ok]')")
    widget.evaluate(f"document.querySelector('{CHAT}').restart()")
    wait_state(widget, "ready")

    assert widget.locator(f"{CHAT} .msg.user .bubble").all_inner_texts() == ["remember 42"]
    states = widget.locator(f"{CHAT} details.tool").evaluate_all("(cards) => cards.map((c) => c.dataset.state)")
    if end == "close":
        assert states == ["ok", "ok"]
    else:  # ls may have finished in the worker before the page killed it, or not
        assert states[0] == "ok" and states[1] in ("ok", "error")
    if end == "kill":
        assert "Interrupted" in widget.locator(f"{CHAT} .meta").inner_text()
    widget.locator(f"{CHAT} .entry.file[data-path='n.txt']").wait_for()
    assert titles(open_threads(widget)) == ["remember 42"]
    widget.keyboard.press("Escape")

    assert send(widget, "what was it?")["text"] == "it was 42"
    last = [r for r in provider.requests if r.method == "POST"][-1].body["messages"]
    roles = [m["role"] for m in last]
    if end == "close":
        assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    else:  # the run was cut off after the tool calls: both have results, then the prompt
        assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert last[1]["content"] == "remember 42" and last[-1]["content"] == "what was it?"
    assert widget.evaluate(f"document.querySelector('{CHAT}').harness.fs.readFile('n.txt', 'utf8')") == "42"


def test_a_workspace_open_elsewhere_is_a_readable_boot_error(widget):
    call(widget, "widget.openWorkspaceElsewhere", "busy")
    mount(widget, {}, {**scripted(), "workspace": "busy"}, wait=False)
    wait_state(widget, "error")
    text = widget.locator(f"{CHAT} .notice.error").inner_text()
    assert "could not start (step 'storage')" in text
    assert "open in another tab" in text and "storage: \"memory\"" in text
    widget.evaluate("window.other.close()")
    widget.locator(f"{CHAT} .notice.error").get_by_role("button", name="Try again").click()
    wait_state(widget, "ready")
    assert widget.evaluate(f"document.querySelector('{CHAT}').harness.storage.kind") == "opfs"


def test_a_full_storage_is_shown_once(widget):
    mount(widget, {}, scripted(
        {"toolCalls": [{"name": "write", "arguments": {"path": "big.txt", "content": "b" * 400_000}}]},
        {"text": "written"}))
    usage = widget.evaluate("navigator.storage.estimate().then((e) => e.usage)")
    cdp = widget.context.new_cdp_session(widget)
    origin = widget.evaluate("location.origin")
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": usage + 64 * 1024})
    assert send(widget, "write a big file")["stopReason"] == "stop"
    notice = widget.locator(f"{CHAT} .notice.error")
    expect(notice).to_have_count(1)
    assert "not being saved" in notice.inner_text()
    assert "storage for this site is full" in notice.inner_text()
    # kept (the files panel is listed again once the run has ended)
    expect(widget.locator(f"{CHAT} .entry.file[data-path='big.txt']")).to_have_count(1)


def test_without_opfs_the_widget_says_the_files_live_in_memory_and_offers_a_zip(
        browser_type, browser_type_launch_args, server, tmp_path):
    """A page the browser gives no OPFS (here: plain http under a real host name, not a
    secure context; a frame of another site is another such page): the harness keeps its
    files in memory, and the widget says so, why, and offers the workspace as a zip."""
    import io
    import os
    import zipfile

    port = server.url.rsplit(":", 1)[1]
    args = [*browser_type_launch_args["args"], "--host-resolver-rules=MAP pyharness.test 127.0.0.1"]
    browser = browser_type.launch(**{**browser_type_launch_args, "args": args})
    try:
        page = browser.new_page(accept_downloads=True)
        page.goto(f"http://pyharness.test:{port}/widget.html")
        page.wait_for_function("document.body.dataset.loaded === 'yes'")
        mount(page, {}, scripted(
            {"toolCalls": [{"name": "write", "arguments": {"path": "kept.txt", "content": "mine\n"}}]},
            {"text": "Written."}))
        notice = page.locator(f"{CHAT} .notice", has_text="Files are kept in memory only")
        assert page.locator(f"{CHAT} .status").inner_text().strip() == "Ready (in memory)"
        expect(notice).to_be_visible()
        assert "lost when the page reloads" in notice.inner_text()
        assert "OPFS is not available" in notice.inner_text()  # the browser's reason
        shots = os.environ.get("PYHARNESS_SCREENSHOTS", "/tmp")
        page.locator(CHAT).screenshot(path=f"{shots}/widget-memory-only.png")
        send(page, "write kept.txt")
        with page.expect_download() as download:
            notice.get_by_role("button", name="Download the workspace").click()
        saved = tmp_path / "workspace.zip"
        download.value.save_as(saved)
        assert download.value.suggested_filename.endswith(".zip")
    finally:
        browser.close()
    with zipfile.ZipFile(io.BytesIO(saved.read_bytes())) as z:
        assert z.read("kept.txt") == b"mine\n"
