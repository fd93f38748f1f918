"""<pyharness-chat> on a page whose Content-Security-Policy allows no inline script and
no inline style (`style-src 'self'`): the widget is drawn with its own styles (one
constructed stylesheet adopted by its shadow root, classes instead of style attributes),
runs a turn and shows a file, and the page sees no CSP violation at all. The policy is
docs/embedding.md's, read from it; the page is e2e/pages/widget-strict.html and its side
of the row e2e/pages/rows/widget_strict.mjs."""

import re
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.conftest import BUNDLE, ROOT, call
from tooling.serve import StaticServer

from .test_widget import CHAT, WRITE_TURNS


def documented_csp() -> str:
    """The policy under "The widget on a strict CSP" in docs/embedding.md, as written."""
    text = (ROOT / "docs" / "embedding.md").read_text()
    found = re.search(r"\*\*The widget on a strict CSP\.\*\*.*?```\nContent-Security-Policy: (.+?)\n```",
                      text, re.S)
    assert found, "docs/embedding.md has no CSP block for the widget"
    return found.group(1)


@pytest.fixture
def strict() -> Iterator[StaticServer]:
    srv = StaticServer({"/": ROOT / "e2e" / "pages", "/pyharness/": BUNDLE},
                       headers={"/widget-strict.html": {"Content-Security-Policy": documented_csp()}})
    yield srv.start()
    srv.stop()


def test_the_widget_is_styled_and_runs_under_style_src_self(page: Any, strict: StaticServer) -> None:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{strict.url}/widget-strict.html")
    sent = [h for path, _, h in strict.responses if path == "/widget-strict.html"]
    assert "style-src 'self'" in sent[0]["content-security-policy"]
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
