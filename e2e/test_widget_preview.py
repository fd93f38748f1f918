"""The widget's Preview tab, driven like a user: a run that writes an HTML file opens the
Preview beside the conversation (in the Files panel's place) on that file's folder; the
site shows in it, its console under it (a 404 image is an error line); the model's
preview_errors tool reads the same console; Reload and Close work with the mouse and the
keyboard, and the header's Preview button opens it again; no axe-core violation. The
screenshot is kept in $PYHARNESS_SCREENSHOTS when set."""

import os
from pathlib import Path

from e2e.conftest import axe_violations
from e2e.test_widget import CHAT, mount, send

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Plan</title>
<link rel="stylesheet" href="style.css"></head><body><h1>Launch plan</h1>
<ol id="steps"></ol><img src="missing.png" alt="chart">
<script type="module" src="app.mjs"></script></body></html>"""
STYLE = "body { font-family: sans-serif; margin: 24px; } h1 { color: rgb(20, 90, 160); }"
APP = """const steps = ["Write the page", "Check it in the preview", "Ship it"];
for (const s of steps) {
  const li = document.createElement("li"); li.textContent = s;
  document.getElementById("steps").append(li);
}
console.log("steps", steps.length);
"""


def write(path, content):
    return {"name": "write", "arguments": {"path": path, "content": content}}


TURNS = [
    {"text": "Writing the page.", "toolCalls": [write("site/style.css", STYLE),
                                                write("site/app.mjs", APP),
                                                write("site/index.html", PAGE)]},
    {"toolCalls": [{"name": "preview_errors", "arguments": {}}]},
    {"text": "The page is up; one image is missing."},
]


def site_frame(page):
    for frame in page.frames:
        parent = frame.parent_frame
        if parent is not None and parent.url.split("#")[0].endswith("/preview.html"):
            return frame
    return None


def test_the_preview_tab_shows_the_site_and_its_console(widget, tmp_path):
    mount(widget, {"heading": "Preview"}, {"model": {"api": "scripted", "turns": TURNS}})
    chat = widget.locator(CHAT)
    toggle = chat.get_by_role("button", name="Preview", exact=True)
    assert toggle.get_attribute("aria-expanded") == "false"
    assert send(widget, "Make a launch plan page")["stopReason"] == "stop"
    panel = chat.locator("section.preview")
    assert toggle.get_attribute("aria-expanded") == "true" and panel.is_visible()
    assert chat.locator("aside.files").is_hidden()  # in the Files panel's place
    panel.locator(".preview-state", has_text="Loaded").wait_for()
    assert panel.locator(".path").inner_text() == "/work/site/index.html"
    lines = panel.locator(".preview-console li")
    assert lines.first.get_attribute("data-level") == "error"
    assert "404 /missing.png" in lines.first.inner_text()
    assert "steps 3" in panel.locator(".preview-console").inner_text()
    frame = site_frame(widget)
    assert frame is not None
    assert frame.evaluate("[...document.querySelectorAll('#steps li')].length") == 3
    assert frame.evaluate("getComputedStyle(document.querySelector('h1')).color") == \
        "rgb(20, 90, 160)"
    # the model read the same console with preview_errors
    tool = chat.locator("details.tool[data-tool=preview_errors]")
    tool.locator("summary").click()
    assert "404 /missing.png" in tool.inner_text()
    assert axe_violations(widget) == []
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.screenshot(path=str(out / "widget-preview.png"))
    # the keyboard: Reload, then Close (the focus goes back to the header's button)
    reload = panel.get_by_role("button", name="Reload the preview")
    reload.focus()
    widget.keyboard.press("Enter")
    panel.locator(".preview-state", has_text="Loaded").wait_for()
    panel.get_by_role("button", name="Close the preview").focus()
    widget.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "false" and panel.is_hidden()
    assert widget.evaluate(f"document.querySelector('{CHAT}').shadowRoot.activeElement"
                           "?.getAttribute('aria-label')") == "Preview"
    assert site_frame(widget) is None  # the frame went with it
    # the mouse opens it again, on the same page
    toggle.click()
    panel.locator(".preview-state", has_text="Loaded").wait_for()
    assert panel.locator(".path").inner_text() == "/work/site/index.html"
