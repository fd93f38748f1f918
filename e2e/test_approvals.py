"""Permission rules and approvals in real Chromium: the `permissions` option, the page's
onApproval answering once / always / deny, a timeout, a cancel and a close() during an
approval, a model that tries to approve itself, and host authority (the page's tools the
only writers). Page side: e2e/pages/rows/approvals.mjs; the rule engine's table is
tests/test_permissions.py, the loop's side tests/test_approvals.py."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.conftest import call


def test_ask_answered_once_deny_and_always_by_the_page(app: Any) -> None:
    r = call(app, "approvals.onceDenyAlways")
    # asked about a, b and c; d is covered by c's "always", docs/** allowed, secret/** denied
    assert [a["subject"] for a in r["asked"]] == ["a.txt", "b.txt", "c.txt"]
    first = r["asked"][0]
    assert first["tool"] == "write" and first["input"] == {"path": "a.txt", "content": "a\n"}
    assert first["rule"] == 'write: "*"' and first["runId"] and first["callId"] == "call_1"
    assert "+a" in first["diff"] and first["signalAborted"] is False
    decisions = [(a["type"], a.get("decision"), a.get("by")) for a in r["approvals"]]
    assert decisions == [
        ("approval_request", None, None), ("approval_result", "once", "page"),
        ("approval_request", None, None), ("approval_result", "deny", "page"),
        ("approval_request", None, None), ("approval_result", "always", "page"),
        ("approval_result", "always", "rule"),  # d.txt: the earlier "always"
        ("approval_result", "deny", "rule"),  # secret/k.txt: a deny rule wins over it
    ]
    errors = {x["callId"]: x["output"] for x in r["results"] if x["isError"]}
    assert set(errors) == {"call_2", "call_6"}
    assert "denied by the user: not b, please" in errors["call_2"]
    assert 'denied by the permission rule write: "secret/**"' in errors["call_6"]
    assert r["files"] == {"a.txt": True, "b.txt": False, "c.txt": True, "d.txt": True,
                          "docs/x.md": True, "secret/k.txt": False}
    assert r["text"] == "done" and r["stopReason"] == "stop"  # the run went on


def test_no_answer_in_time_is_a_deny(app: Any) -> None:
    r = call(app, "approvals.timeoutDenies")
    assert [(a["type"], a.get("by")) for a in r["approvals"]] == [
        ("approval_request", None), ("approval_result", "timeout")]
    [result] = r["results"]
    assert result["isError"] and "no answer within 300 ms" in result["output"]
    assert r["aborted"] is True and r["file"] is False and r["text"] == "went on"


@pytest.mark.serial
@pytest.mark.parametrize("how", ["cancel", "close"])
def test_cancel_or_close_during_an_approval_settles_at_once(app: Any, how: str) -> None:
    r = call(app, "approvals.stopDuringApproval", how)
    assert r["ms"] < 100, r
    assert r["aborted"] is True  # onApproval's signal
    if how == "cancel":
        assert r["ok"] and r["stopReason"] == "aborted"
        assert r["approvals"][-1]["by"] == "cancel" and r["approvals"][-1]["decision"] == "deny"
        assert r["file"] is False
    else:
        assert not r["ok"] and r["code"] == "ECANCELED"


def test_nothing_the_model_writes_approves_a_call(app: Any) -> None:
    r = call(app, "approvals.modelCannotApprove")
    # each call a rule asks about was asked about, and the page's "deny" held; the paths
    # that climb into locked/ were matched after the jail resolved them (denied, unasked)
    assert r["asked"] == ["approval.json", "approval.json", "a.txt"]
    assert r["files"] == []
    assert all(x["isError"] for x in r["results"]) and len(r["results"]) == 6
    outputs = [x["output"] for x in r["results"]]
    assert "decision" in outputs[1] or "approved" in outputs[1]  # extra fields: a schema error
    assert 'denied by the permission rule write: "locked/**"' in outputs[2]
    assert 'denied by the permission rule write: "locked/**"' in outputs[3]
    assert not any(a.get("by") == "page" and a.get("decision") != "deny" for a in r["approvals"])


def test_host_authority_only_the_page_tools_change_work(app: Any) -> None:
    r = call(app, "approvals.hostAuthority")
    assert sorted(r["tools"]) == ["apply_change", "find", "grep", "ls", "read"]
    assert [x["isError"] for x in r["results"]] == [True, True, True, True, False, False, False]
    assert r["log"] == ["notes/a.md", "seed.txt"]
    # every change in /work during the run came through the page's tool, and says so
    assert [(c["path"], c["kind"]) for c in r["changes"]] == [
        ("/work/notes", "created"), ("/work/notes/a.md", "created"), ("/work/seed.txt", "modified")]
    calls = {x["callId"] for x in r["results"] if x["name"] == "apply_change"}
    assert all(c["tool"] == "apply_change" and c["callId"] in calls and c["runId"] == r["runId"]
               for c in r["changes"])
    assert r["tree"] == ["notes/", "notes/a.md", "seed.txt"]
    assert r["seed"] == "changed by the host tool\n"
