"""Robustness in real Chromium: no model output, page call or file name can hang or break
a session (issue 10's failures, each one a row), close() in every phase, and the bridge
fed 10,000 malformed messages in each direction. The page side of each row is an export of
e2e/pages/rows/robustness.mjs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.conftest import call

NESTED = "[" * 20_000 + "]" * 20_000


def run_turns(app: Any, turns: list[dict[str, Any]], then: str = "", **options: Any) -> Any:
    """Boot with a scripted model, prompt once, collect tool_end events and run.done, then
    prompt again (the harness must still answer)."""
    return call(app, "robustness.runTurns", turns, options)


@pytest.mark.serial  # times how fast it settles
def test_a_catastrophic_grep_pattern_is_answered_at_once(app: Any) -> None:
    r = run_turns(app, [
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "a" * 40 + "!\n"}},
                       {"name": "grep", "arguments": {"pattern": "(a+)+$", "path": "a.txt"}}]},
        {"text": "done"}, {"text": "still here"}])
    grep = r["ends"][1]
    assert grep["isError"] and "pattern" in grep["output"].lower()
    assert r["ms"] < 5000 and r["next"]["text"] == "still here"


def test_arguments_nested_20000_deep_are_refused_before_parsing(app: Any) -> None:
    r = run_turns(app, [{"toolCalls": [{"name": "write", "arguments": NESTED}]},
                        {"text": "done"}, {"text": "still here"}])
    assert r["ends"][0]["isError"] and "nest" in r["ends"][0]["output"].lower()
    assert r["done"]["text"] == "done" and r["next"]["text"] == "still here"


def test_lone_surrogates_from_the_model_and_the_page_never_break_a_run(app: Any, provider: Any) -> None:
    provider.script([
        {"text": "broken \ud800 text", "toolCalls": [["write", {"path": "s\udc00.txt", "content": "x\ud800"}]]},
        {"text": "after \udfff"}, {"text": "third"}, {"text": "fourth"}])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "model": "m"}
    r = call(app, "robustness.loneSurrogates", model)
    assert r["first"]["stopReason"] == "stop" and "\ufffd" in r["first"]["text"]
    assert r["second"]["text"] == "third" and r["third"]["text"] == "fourth"
    assert r["files"] == ["s\ufffd.txt"]
    last = [q for q in provider.requests if q.method == "POST"][-1]
    json.dumps(last.body, ensure_ascii=False).encode("utf-8")  # the history is valid UTF-8


def test_long_names_and_deep_paths_get_clear_errors(app: Any) -> None:
    r = call(app, "robustness.longNamesAndDeepPaths")
    assert r["long"]["code"] == "ENAMETOOLONG"
    assert r["deep"]["code"] in ("ENAMETOOLONG", "EINVAL") and "EIO" not in r["deep"]["message"]
    assert r["listing"] == {"ok": True, "value": []}
    assert r["ends"][0]["isError"] and "internal" not in r["ends"][0]["output"].lower()


def test_options_that_are_not_json_reject_with_einval_and_start_nothing(app: Any) -> None:
    r = call(app, "robustness.optionsThatAreNotJson")
    for result in (r["a"], r["b"]):
        assert result["code"] == "EINVAL" and result["name"] == "HarnessError"
    assert r["workers"] == 0


PHASES = ["manifest", "runtime", "packages", "storage", "harness"]


@pytest.mark.serial  # times how fast each abort settles
@pytest.mark.parametrize("step", PHASES)
def test_aborting_each_boot_step_settles_at_once(app: Any, step: str) -> None:
    r = call(app, "robustness.abortAtStep", step)
    assert r["result"]["code"] == "ECANCELED" and r["ms"] < 100


@pytest.mark.serial  # times how fast it settles
def test_close_during_a_run_a_tool_call_an_fs_call_and_a_shell_command(app: Any) -> None:
    r = call(app, "robustness.closeInEveryPhase")
    for name, phase in r.items():
        assert phase["ms"] < 100, (name, phase)
        assert set(phase["codes"]) == {"ECANCELED"}, (name, phase)
        assert phase["frames"] == 0


def test_ten_thousand_malformed_messages_each_way(app: Any) -> None:
    errors: list[str] = []
    app.on("pageerror", lambda e: errors.append(str(e)))
    r = call(app, "robustness.malformedMessagesEachWay")
    assert r["sent"] > 500 and r["once"], r
    assert r["still"] == "usable" and r["diagnostics"] > 0
    assert r["done"]["stopReason"] == "error"  # the scripted model has no turns: a typed end
    assert errors == []
