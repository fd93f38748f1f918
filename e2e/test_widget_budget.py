"""<pyharness-chat> under a budget, driven like a user: each run's tokens and cost under
its answer, the 80 % line, and the notice when the budget stops a run. The screenshot
is kept in $PYHARNESS_SCREENSHOTS when set."""

import os
from pathlib import Path

from e2e.conftest import axe_violations
from e2e.test_widget import CHAT, mount, send

USAGE = {"inputTokens": 1200, "outputTokens": 80}
OPTIONS = {
    "model": {"api": "scripted", "prices": {"input": 3, "output": 15}, "turns": [
        {"text": "Writing it.", "usage": USAGE,
         "toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "a"}}]},
        {"text": "Next one.", "usage": USAGE,
         "toolCalls": [{"name": "write", "arguments": {"path": "b.txt", "content": "b"}}]},
        {"text": "never reached", "usage": USAGE},
    ]},
    "budget": {"run": {"requests": 2}},
}


def test_a_runs_usage_and_the_budget_stop_are_shown(widget, tmp_path):
    mount(widget, {"heading": "Budget"}, OPTIONS)
    result = send(widget, "write two files")
    assert result["stopReason"] == "budget"
    chat = widget.locator(CHAT)
    notice = chat.locator(".notice[role=alert]")
    assert notice.locator(".notice-title").inner_text() == "Stopped by the budget"
    assert "stopped by the run's budget of model requests: 2 of 2 used" in notice.inner_text()
    lines = [m.inner_text() for m in chat.locator(".meta").all()]
    assert "Budget: 100 % of the run's budget of model requests is used (2 of 2)" in lines
    cost = 2 * (1200 * 3 + 80 * 15) / 1e6
    assert lines[-1] == f"2,400 tokens in · 160 out · ${cost:.4f}"
    assert "never reached" not in chat.inner_text()
    assert axe_violations(widget) == []
    out = Path(os.environ.get("PYHARNESS_SCREENSHOTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    chat.screenshot(path=str(out / "widget-budget.png"))
