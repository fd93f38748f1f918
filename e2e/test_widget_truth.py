"""What the widget shows is what is there, in real Chromium: a link whose text names one
site and goes to another shows where it goes; a file name with bidi controls or
zero-width characters shows them (files tree, viewer, tool cards, code in answers) instead of reading as
another name; and files and folders can be deleted from the files panel, with a confirm
step. Also keeps a screenshot of the links and names (PYHARNESS_SCREENSHOTS=DIR). The page side
of the longer steps is in e2e/pages/rows/widget.mjs."""

import json
import os
from pathlib import Path

from e2e.conftest import call

from .test_widget import CHAT, mount, scripted, send

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "invoice\u202efdp.exe" reads "invoiceexe.pdf"
SPOOF = f"invoice{RLO}fdp.exe"
ZWSP = "\u200b"


def send_and_settle(page, text):
    """send(), then wait for the answer's streaming to end (its links are final)."""
    result = send(page, text)
    page.wait_for_function(f"!document.querySelector('{CHAT}').shadowRoot.querySelector('.md.streaming')")
    return result


ANSWER = (
    "Your statement: [https://bank.example/statement](https://evil.example/?d=workspace-data), "
    "or [bank.example](https://bank.example/login), or [the docs](https://docs.example/), "
    f"and mail [me@bank.example](mailto:me@evil.example). Saved as `{SPOOF}`."
)


def test_links_and_names_show_what_they_really_are(widget, tmp_path):
    mount(widget, {}, scripted(
        {"text": "Writing it.", "toolCalls": [
            {"name": "write", "arguments": {"path": f"docs/{SPOOF}", "content": f"a{ZWSP}b\n"}}]},
        {"text": ANSWER},
    ))
    widget.set_viewport_size({"width": 1100, "height": 760})
    assert send_and_settle(widget, "Write the invoice")["stopReason"] == "stop"
    chat = widget.locator(CHAT)

    # links: every one has its real destination as title; the lying ones show it beside
    answer = chat.locator(".md").last
    links = call(widget, "widget.answerLinks")
    assert links == [
        ["https://bank.example/statement", "https://evil.example/?d=workspace-data", "(evil.example)"],
        ["bank.example", "https://bank.example/login", None],
        ["the docs", "https://docs.example/", None],
        ["me@bank.example", "mailto:me@evil.example", "(me@evil.example)"],
    ]
    note = answer.locator(".link-dest").first
    assert note.is_visible() and note.get_attribute("title") == "This link goes to https://evil.example/?d=workspace-data"
    assert "https://bank.example/statement (evil.example)" in answer.inner_text()

    # names: the override is shown, not obeyed, in the tree, the viewer and the tool card
    escaped = "invoice⟨U+202E⟩fdp.exe"
    entry = chat.locator(f".entry.file[data-path='docs/{SPOOF}']")
    entry.wait_for()
    assert entry.locator(".name").inner_text() == escaped
    assert entry.get_attribute("title").startswith(f"docs/{escaped}")
    mark = entry.locator(".name .hidden-char")
    assert mark.inner_text() == "⟨U+202E⟩"
    assert mark.get_attribute("title") == "Hidden character U+202E (right-to-left override)"
    assert RLO not in entry.evaluate("(e) => e.textContent")
    card = chat.locator("details.tool").first
    assert card.locator(".tool-arg").inner_text() == f"docs/{escaped}"
    card.locator("summary").click()
    assert card.locator(".args dd").nth(1).inner_text() == "a⟨U+200B⟩b\n"
    entry.click()
    viewer = chat.locator(".viewer")
    viewer.locator("pre").wait_for()
    assert viewer.locator(".vpath").inner_text() == f"docs/{escaped}"
    assert viewer.locator(".vpath").get_attribute("title") == f"/work/docs/{escaped}"
    assert viewer.locator("pre").inner_text() == "a⟨U+200B⟩b\n"
    # and in the answer's code, where a name is quoted: prose keeps its marks (RTL text)
    assert answer.locator("code").inner_text() == escaped

    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.locator("[role=log]").evaluate("(log) => { log.style.scrollBehavior = 'auto'; log.scrollTop = log.scrollHeight; }")
    widget.wait_for_timeout(300)
    chat.screenshot(path=str(out / "widget-truth.png"))
    assert (out / "widget-truth.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(json.dumps({"screenshot": str(out / "widget-truth.png")}))


def seeded(widget):
    """A widget over files written by the page: a.txt, keep.txt, and data/ with a nested
    folder."""
    mount(widget, {}, scripted({"text": "ok"}))
    call(widget, "widget.seedFiles", "data/deep", ["a.txt", "keep.txt", "data/one.csv", "data/deep/two.csv"])
    return widget.locator(CHAT)


def listed(widget):
    return call(widget, "widget.listed")


def test_files_and_folders_are_deleted_from_the_panel_after_a_confirm(widget):
    chat = seeded(widget)
    chat.locator(".entry.file[data-path='data/deep/two.csv']").wait_for()
    # "no" keeps the file, and gives the focus back to its delete button
    chat.get_by_label("Delete a.txt", exact=True).click()
    confirm = chat.locator(".confirm")
    assert confirm.inner_text().split() == ["Delete?", "yes", "no"]
    assert widget.evaluate(f"document.querySelector('{CHAT}').shadowRoot.activeElement.className") == "yes"
    confirm.get_by_role("button", name="No, keep it").click()
    assert chat.locator(".confirm").count() == 0
    assert "a.txt" in listed(widget)
    # Escape cancels too
    chat.get_by_label("Delete a.txt", exact=True).click()
    widget.keyboard.press("Escape")
    assert chat.locator(".confirm").count() == 0
    # "yes" deletes the file, and only it
    chat.locator(".entry.file[data-path='a.txt']").click()  # open in the viewer: it closes
    chat.locator(".viewer pre").wait_for()
    chat.get_by_label("Delete a.txt", exact=True).click()
    chat.get_by_role("button", name="Yes, delete a.txt").click()
    chat.locator(".entry.file[data-path='a.txt']").wait_for(state="detached")
    assert "Deleted a.txt" in chat.locator(".files-foot").inner_text()
    assert not chat.locator(".viewer").is_visible()
    assert listed(widget) == ["data", "keep.txt"]
    # a folder goes with everything in it
    chat.get_by_label("Delete the folder data and everything in it").click()
    chat.get_by_role("button", name="Yes, delete the folder data and everything in it").click()
    chat.locator(".entry.dir[data-path='data']").wait_for(state="detached")
    assert chat.locator(".entry.file[data-path='data/one.csv']").count() == 0
    assert listed(widget) == ["keep.txt"]


def test_a_failed_delete_is_shown_and_loses_nothing(widget):
    chat = seeded(widget)
    chat.locator(".entry.file[data-path='keep.txt']").wait_for()
    call(widget, "widget.makeRmFail")
    chat.get_by_label("Delete keep.txt", exact=True).click()
    chat.get_by_role("button", name="Yes, delete keep.txt").click()
    foot = chat.locator(".files-foot.error")
    foot.wait_for()
    assert foot.inner_text() == "Could not delete keep.txt: EBUSY: keep.txt is in use"
    assert chat.locator(".entry.file[data-path='keep.txt']").count() == 1
    assert chat.locator(".confirm").count() == 0
    assert listed(widget) == ["a.txt", "data", "keep.txt"]
