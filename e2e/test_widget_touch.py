"""<pyharness-chat> on a phone: a 390 x 844 touch viewport (a coarse pointer), the files
panel, the thread list, a file's delete confirmation and a tool card open in turn. Every
element a finger can reach (a button, a field, a file row, a tool card's summary) is at
least 44 x 44 CSS px (WCAG 2.5.5, the platforms' guidelines), and nothing runs past the
viewport's width; axe-core finds no WCAG 2.2 A/AA violation in any of those views. With
a screen keyboard open the composer and the newest message stay in view. The desktop
layout is another row's (test_widget.py's screenshots)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from e2e.conftest import axe_violations, call
from e2e.test_widget import CHAT, WRITE_TURNS, mount, send

SCREENSHOT = Path(os.environ.get("PYHARNESS_SCREENSHOTS", "/tmp")) / "widget-phone.png"
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "device_scale_factor": 3}


def test_every_target_is_at_least_44_px_on_a_phone(browser: Any, server: Any) -> None:
    context = browser.new_context(**PHONE)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/widget.html")
        page.wait_for_function("document.body.dataset.loaded === 'yes'")
        assert page.evaluate("matchMedia('(pointer: coarse)').matches && innerWidth === 390")
        mount(page, {"style": "height: 100vh"}, WRITE_TURNS, ["Write a file"])
        views = {"empty": call(page, "widget_touch.targets")}
        violations = {"empty": axe_violations(page)}
        assert send(page, "Write out/hello.py")["stopReason"] == "stop"
        page.locator(f"{CHAT} details.tool summary").first.click()
        views["conversation"] = call(page, "widget_touch.targets")
        violations["conversation"] = axe_violations(page)
        files = page.locator(f"{CHAT} button[aria-label=Files]")
        if files.get_attribute("aria-expanded") != "true":  # a write may have opened it
            files.click()
        out = page.locator(f"{CHAT} .entry.dir[data-path='out']")
        out.wait_for()
        if out.get_attribute("aria-expanded") != "true":
            out.click()
        page.locator(f"{CHAT} .entry.file[data-path='out/hello.py']").click()
        page.locator(f"{CHAT} .viewer").wait_for()
        views["files"] = call(page, "widget_touch.targets")
        violations["files"] = axe_violations(page)
        page.screenshot(path=str(SCREENSHOT))
        page.locator(f"{CHAT} .row:has(.entry.file[data-path='out/hello.py']) .del").click()
        page.locator(f"{CHAT} .tree .confirm").wait_for()
        views["delete"] = call(page, "widget_touch.targets")
        page.keyboard.press("Escape")
        files.click()
        page.locator(f"{CHAT} button[aria-label=Threads]").click()
        page.locator(f"{CHAT} .thread").first.wait_for()
        views["threads"] = call(page, "widget_touch.targets")
        violations["threads"] = axe_violations(page)
    finally:
        context.close()
    for name, view in views.items():
        assert view["count"] > 3, (name, view)
        assert view["small"] == [], (name, view["small"])
        assert view["overflow"] <= 0, (name, view)
    assert {k: v for k, v in violations.items() if v} == {}  # axe-core, WCAG 2.2 A/AA


LONG = {"model": {"api": "scripted", "turns": [
    {"text": "\n\n".join(f"Paragraph {i}: " + "words " * 30 for i in range(12))},
    {"text": "Still here, above the keyboard."},
]}}


def test_the_composer_stays_in_view_with_a_screen_keyboard(browser: Any, server: Any) -> None:
    """A screen keyboard shortens the viewport (a page with `interactive-widget=
    resizes-content`, or a browser that resizes the layout viewport): the widget at
    100dvh shrinks with it, the message box and Send stay in view, the conversation
    keeps its newest message in view, and a prompt typed then sends."""
    context = browser.new_context(**PHONE)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/widget.html")
        page.wait_for_function("document.body.dataset.loaded === 'yes'")
        page.add_style_tag(content="body { padding: 0; } main { max-width: none; }")
        mount(page, {"style": "height: 100dvh"}, LONG)
        assert send(page, "Write a long answer")["stopReason"] == "stop"
        page.set_viewport_size({"width": 390, "height": 420})  # the keyboard takes 424 px
        page.locator(f"{CHAT} textarea").focus()
        page.wait_for_timeout(100)  # a resize's layout and the log's stick-to-bottom
        view = call(page, "widget_touch.keyboardView")
        assert view["focused"] == "input"
        for part in ("input", "send"):
            assert view[part]["top"] >= 0 and view[part]["bottom"] <= view["height"], (part, view)
        assert view["log"]["height"] >= 120 and view["lastInView"], view
        assert view["overflow"] <= 0 and view["pageScroll"] == 0, view
        assert send(page, "One more, with the keyboard open")["stopReason"] == "stop"
        view = call(page, "widget_touch.keyboardView")
        assert view["lastInView"] and view["input"]["bottom"] <= view["height"], view
    finally:
        context.close()
