"""<pyharness-chat> on a page whose Content-Security-Policy allows no inline script and
no inline style (`style-src 'self'`): the widget is drawn with its own styles (one
constructed stylesheet adopted by its shadow root, classes instead of style attributes),
runs a turn and shows a file, and the page sees no CSP violation at all. The page is
e2e/pages/widget-strict.html; its side of the row is e2e/pages/rows/widget_strict.mjs."""

from typing import Any

from e2e.conftest import call

from .test_widget import CHAT, WRITE_TURNS


def test_the_widget_is_styled_and_runs_under_style_src_self(page: Any, server: Any) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{server.url}/widget-strict.html")
    # Functions, not expressions: the page's CSP refuses the eval of an expression.
    page.wait_for_function("() => document.body.dataset.loaded === 'yes'")
    call(page, "widget_strict.mount", WRITE_TURNS)
    page.wait_for_function(f"() => document.querySelector('{CHAT}')?.dataset.state === 'ready'",
                           timeout=60_000)
    page.locator(f"{CHAT} textarea").fill("Write out/hello.py")
    page.locator(f"{CHAT} textarea").press("Enter")
    page.wait_for_function("() => window.lastResult !== undefined", timeout=60_000)
    page.locator(f"{CHAT} .entry.file[data-path='out/hello.py']").click()
    page.locator(f"{CHAT} .viewer pre").wait_for()
    drawn = call(page, "widget_strict.drawn")
    assert drawn["sheets"] == 1 and drawn["styleElements"] == 0, drawn
    assert drawn["header"] == "flex" and drawn["viewer"] == "auto", drawn
    assert drawn["send"]["width"] == "34px", drawn
    assert drawn["send"]["background"] not in ("rgba(0, 0, 0, 0)", "transparent"), drawn
    assert call(page, "widget_strict.seen") == []
    assert errors == []
