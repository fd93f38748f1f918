"""Attachments in <pyharness-chat>, as a user gives them: an image pasted into the composer
and a file dropped on it wait as thumbnails (each can be removed), go with the prompt to
/work/attachments/, and the image is drawn in the conversation from the page's own bytes
(a blob: URL) — also after a reload. A refused attachment puts the text back. The
screenshot is kept in $PYHARNESS_SCREENSHOTS when set."""

import base64
import os
from pathlib import Path

from e2e.test_attachments import png
from e2e.test_widget import CHAT, mount, scripted, send, wait_state
from e2e.test_widget_sessions import reload

SHOT = png(40, 30, (220, 40, 40))
ROOT = f"document.querySelector('{CHAT}').shadowRoot"
FS = f"document.querySelector('{CHAT}').harness.fs"

# A paste (into the textarea) and a drop (on the composer) as the browser delivers them:
# events whose DataTransfer carries File objects.
GIVE = f"""([how, files]) => {{
  const transfer = new DataTransfer();
  for (const f of files) {{
    const data = f.bytes ? new Uint8Array(f.bytes) : new Uint8Array(f.size);
    transfer.items.add(new File([data], f.name, {{ type: f.type }}));
  }}
  const root = {ROOT};
  if (how === "paste") {{
    root.querySelector("textarea").dispatchEvent(new ClipboardEvent("paste", {{ clipboardData: transfer, bubbles: true, cancelable: true }}));
  }} else {{
    const form = root.querySelector("form");
    form.dispatchEvent(new DragEvent("dragover", {{ dataTransfer: transfer, bubbles: true, cancelable: true }}));
    form.dispatchEvent(new DragEvent("drop", {{ dataTransfer: transfer, bubbles: true, cancelable: true }}));
  }}
}}"""

IMAGES = f"""() => Array.from({ROOT}.querySelectorAll(".msg.user img")).map((i) => ({{
  src: i.src.slice(0, 5), width: i.naturalWidth, alt: i.alt, done: i.complete }}))"""


def give(page, how, *files):
    page.evaluate(GIVE, [how, list(files)])


def test_paste_and_drop_then_the_image_is_drawn_and_redrawn_after_a_reload(widget, tmp_path):
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    widget.set_viewport_size({"width": 900, "height": 800})
    widget.add_style_tag(content="pyharness-chat { height: 760px; }")
    mount(widget, {}, scripted({"text": "A red box, 40 by 30. I'll match it."}))
    chat = widget.locator(CHAT)
    give(widget, "paste", {"name": "shot.png", "type": "image/png", "bytes": list(SHOT)})
    give(widget, "drop", {"name": "notes.txt", "type": "text/plain", "bytes": list(b"make it red\n")},
         {"name": "extra.csv", "type": "text/csv", "bytes": list(b"a,b\n")})
    tray = chat.locator(".tray .attachment")
    assert tray.count() == 3
    assert chat.locator(".tray img").get_attribute("src").startswith("blob:")
    chat.get_by_role("button", name="Remove extra.csv").click()
    assert tray.count() == 2
    chat.locator("textarea").fill("make it look like this")
    chat.screenshot(path=str(out / "widget-attachments.png"))
    widget.evaluate("window.lastResult = undefined")
    chat.locator("textarea").press("Enter")
    widget.wait_for_function("window.lastResult !== undefined", timeout=60_000)
    assert tray.count() == 0 and not chat.locator(".tray").is_visible()
    widget.wait_for_function(f"({IMAGES})().every((i) => i.done) && ({IMAGES})().length === 1")
    assert widget.evaluate(IMAGES) == [{"src": "blob:", "width": 40, "alt": "shot.png", "done": True}]
    assert "make it look like this" in chat.locator(".msg.user .bubble").inner_text()
    listed = widget.evaluate(f"{FS}.readdir('attachments').then((l) => l.map((e) => e.name).sort())")
    assert listed == ["notes.txt", "shot.png"]
    assert widget.evaluate(f"{FS}.readFile('attachments/shot.png').then((b) => Array.from(b))") == list(SHOT)
    chat.screenshot(path=str(out / "widget-attachments-sent.png"))

    reload(widget)
    mount(widget, {}, scripted({"text": "again"}))
    widget.wait_for_function(f"({IMAGES})().length === 1 && ({IMAGES})()[0].done")
    assert widget.evaluate(IMAGES) == [{"src": "blob:", "width": 40, "alt": "shot.png", "done": True}]


def test_a_refused_attachment_puts_the_text_and_files_back(widget):
    mount(widget, {}, scripted({"text": "never"}))
    chat = widget.locator(CHAT)
    give(widget, "drop", {"name": "huge.png", "type": "image/png", "size": 6 * 2**20})
    chat.locator("textarea").fill("look at this")
    result = send(widget, "look at this")
    assert result["stopReason"] == "error" and result["error"]["code"] == "EFBIG"
    wait_state(widget, "ready")
    assert chat.locator("textarea").input_value() == "look at this"
    assert chat.locator(".tray .attachment").count() == 1
    assert "huge.png" in chat.locator("[role=log]").inner_text()


BLUE = png(40, 30, (20, 40, 220))  # what the model writes over the user's picture
CHANGED = f"""() => Array.from({ROOT}.querySelectorAll(".msg.user .image-changed")).map((n) => n.textContent)"""


def test_a_picture_the_model_rewrites_is_never_shown_as_the_users(widget):
    # The model (an attacker) overwrites the user's attachment in /work/attachments/ with
    # its own picture, so that a reload would show it in the user's own message.
    rewrite = ("python3 -c \"import base64; open('attachments/shot.png', 'wb').write("
               f"base64.b64decode('{base64.b64encode(BLUE).decode()}'))\"")
    mount(widget, {"shell": True}, scripted(
        {"text": "Let me touch that up.", "toolCalls": [
            {"name": "bash", "arguments": {"command": rewrite}}]},
        {"text": "Done."}))
    chat = widget.locator(CHAT)
    give(widget, "paste", {"name": "shot.png", "type": "image/png", "bytes": list(SHOT)})
    result = send(widget, "here is my picture")
    assert result["stopReason"] == "stop", result
    now = widget.evaluate(f"{FS}.readFile('attachments/shot.png').then((b) => Array.from(b))")
    assert bytes(now) == BLUE  # the model did rewrite the file
    # While the page holds the user's bytes, the message shows them.
    widget.wait_for_function(f"({IMAGES})().length === 1 && ({IMAGES})()[0].done")
    assert widget.evaluate(IMAGES) == [{"src": "blob:", "width": 40, "alt": "shot.png", "done": True}]

    reload(widget)
    mount(widget, {"shell": True}, scripted({"text": "again"}))
    widget.wait_for_function(f"({CHANGED})().length === 1")
    assert widget.evaluate(CHANGED) == ["shot.png: changed since it was sent"]
    assert widget.evaluate(IMAGES) == []  # the model's picture is not drawn
    placeholder = chat.locator(".msg.user .image-changed")
    assert placeholder.get_attribute("role") == "img"
    assert placeholder.get_attribute("aria-label") == "shot.png: changed since it was sent"
    assert "here is my picture" in chat.locator(".msg.user .bubble").inner_text()

    # Put back as the user sent it, it is drawn again.
    widget.evaluate(f"([b]) => {FS}.writeFile('attachments/shot.png', new Uint8Array(b))", [list(SHOT)])
    reload(widget)
    mount(widget, {"shell": True}, scripted({"text": "again"}))
    widget.wait_for_function(f"({IMAGES})().length === 1 && ({IMAGES})()[0].done")
    assert widget.evaluate(IMAGES) == [{"src": "blob:", "width": 40, "alt": "shot.png", "done": True}]
    assert widget.evaluate(CHANGED) == []
