"""Permission rules on tool calls, through a whole session: deny, ask answered once /
always / deny, the timeout, a cancelled run, no page; and read before overwrite."""

import asyncio
import json
import os

import pytest

from harness.errors import UsageError
from harness.runtime.native import NativeRuntime
from harness.session import Session


class Approver:
    """The page's onApproval, scripted: one answer per request, or hang forever."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []
        self.cancelled = 0

    async def ask(self, request_json):
        self.requests.append(json.loads(request_json))
        answer = self.answers.pop(0) if self.answers else "hang"
        if answer == "hang":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled += 1
                raise
        return answer if isinstance(answer, tuple) else (answer, None)


def write(path, content="x\n"):
    return {"name": "write", "arguments": {"path": path, "content": content}}


def make(tmp_path, calls, approver=None, **options):
    turns = [{"toolCalls": [call]} for call in calls] + [{"text": "done"}]
    runtime = NativeRuntime(str(tmp_path / "ws"), approvals=approver)
    config = json.dumps({"model": {"api": "scripted", "turns": turns}, **options})
    return Session.from_options(config, runtime), runtime


def run(session, text="go", run_id="r1"):
    return asyncio.run(_run(session, text, run_id))


async def _run(session, text, run_id):
    return await session.prompt(run_id, text)


def of(runtime, *types):
    return [m for m in runtime.messages if m.get("type") in types]


def test_a_deny_rule_refuses_the_call_and_the_run_goes_on(tmp_path):
    s, rt = make(tmp_path, [write("secret/a.txt"), write("notes.txt")],
                 permissions={"write": {"*": "allow", "secret/**": "deny"}})
    assert run(s).text == "done"
    assert not os.path.exists(tmp_path / "ws" / "secret" / "a.txt")
    assert (tmp_path / "ws" / "notes.txt").read_text() == "x\n"
    first, second = of(rt, "tool_end")
    assert first["isError"]
    assert 'denied by the permission rule write: "secret/**"' in first["output"]
    assert not second["isError"]
    [result] = of(rt, "approval_result")
    assert result["decision"] == "deny" and result["by"] == "rule"
    assert of(rt, "approval_request") == []


def test_ask_answered_once_runs_the_call_and_the_page_saw_the_diff(tmp_path):
    approver = Approver("once")
    s, rt = make(tmp_path, [write("a.txt", "hello\n")], approver, permissions={"write": "ask"})
    run(s)
    assert (tmp_path / "ws" / "a.txt").read_text() == "hello\n"
    [request] = approver.requests
    assert request["tool"] == "write" and request["subject"] == "a.txt"
    assert request["input"] == {"path": "a.txt", "content": "hello\n"}
    assert request["callId"] == "call_1" and request["runId"] == "r1"
    assert "+hello" in request["diff"] and "/dev/null" in request["diff"]
    types = [m["type"] for m in rt.messages if m.get("callId") == "call_1"]
    assert types[:3] == ["tool_start", "approval_request", "approval_result"]
    [result] = of(rt, "approval_result")
    assert (result["decision"], result["by"]) == ("once", "page")


def test_always_holds_for_that_pattern_but_a_deny_still_wins(tmp_path):
    approver = Approver("always")
    rules = {"write": {"*": "ask", "keep/**": "deny"}}
    s, rt = make(tmp_path, [write("a.txt"), write("b.txt"), write("keep/c.txt")], approver,
                 permissions=rules)
    run(s)
    assert len(approver.requests) == 1  # b.txt was not asked about again
    assert (tmp_path / "ws" / "b.txt").exists() and not (tmp_path / "ws" / "keep").exists()
    results = [(r["decision"], r["by"]) for r in of(rt, "approval_result")]
    assert results == [("always", "page"), ("always", "rule"), ("deny", "rule")]


def test_a_denial_with_a_message_reaches_the_model(tmp_path):
    approver = Approver(("deny", "not that file, use notes.md"))
    s, rt = make(tmp_path, [write("a.txt")], approver, permissions={"write": "ask"})
    run(s)
    [end] = of(rt, "tool_end")
    assert end["isError"]
    assert end["output"] == "The call was not run: denied by the user: not that file, use notes.md."
    assert not (tmp_path / "ws" / "a.txt").exists()


def test_ask_without_a_page_is_a_deny_that_says_so(tmp_path):
    s, rt = make(tmp_path, [write("a.txt")], None, permissions={"write": "ask"})
    run(s)
    [result] = of(rt, "approval_result")
    assert result["decision"] == "deny" and "no page" in result["message"]
    assert not (tmp_path / "ws" / "a.txt").exists()


def test_no_answer_in_time_is_a_deny_and_the_page_is_told(tmp_path):
    approver = Approver("hang")
    s, rt = make(tmp_path, [write("a.txt")], approver, permissions={"write": "ask"},
                 approvalTimeoutMs=30)
    assert run(s).text == "done"
    assert approver.cancelled == 1
    [result] = of(rt, "approval_result")
    assert (result["decision"], result["by"]) == ("deny", "timeout")
    assert "30 ms" in of(rt, "tool_end")[0]["output"]


def test_cancelling_the_run_during_an_approval_ends_it_at_once(tmp_path):
    approver = Approver("hang")
    s, rt = make(tmp_path, [write("a.txt")], approver, permissions={"write": "ask"})

    async def go():
        task = s.prompt("r1", "go")
        while not approver.requests:
            await asyncio.sleep(0)
        s.cancel("r1")
        return await task

    result = asyncio.run(go())
    assert result.stop_reason == "aborted" and approver.cancelled == 1
    [outcome] = of(rt, "approval_result")
    assert (outcome["decision"], outcome["by"]) == ("deny", "cancel")
    assert not (tmp_path / "ws" / "a.txt").exists()


def test_tools_without_a_rule_are_allowed_and_a_bad_rule_fails_the_boot(tmp_path):
    s, rt = make(tmp_path, [write("a.txt")], None, permissions={"read": "deny"})
    run(s)
    assert (tmp_path / "ws" / "a.txt").exists() and of(rt, "approval_result") == []
    with pytest.raises(UsageError, match="wirte"):
        make(tmp_path, [], None, permissions={"wirte": "ask"})
    with pytest.raises(UsageError, match="maybe"):
        make(tmp_path, [], None, permissions={"write": "maybe"})


def test_the_rule_sees_the_path_after_the_jail(tmp_path):
    approver = Approver("once")
    s, _ = make(tmp_path, [write("/work/docs/../a.txt")], approver,
                permissions={"write": {"*": "ask", "docs/**": "allow"}})
    run(s)
    assert approver.requests[0]["subject"] == "a.txt"


# -- read before overwrite ----------------------------------------------------

def edit(path, old, new):
    return {"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old,
                                                                    "newText": new}]}}


def read(path):
    return {"name": "read", "arguments": {"path": path}}


def outputs(runtime):
    return [(m["name"], m["isError"], m["output"]) for m in of(runtime, "tool_end")]


def test_an_existing_file_is_changed_only_after_it_was_read(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("one\n")
    s, rt = make(tmp_path, [write("a.txt", "two\n"), edit("a.txt", "one", "uno"), read("a.txt"),
                            edit("a.txt", "one", "uno"), write("a.txt", "dos\n")])
    run(s)
    results = outputs(rt)
    assert results[0][1] and "you have not read it" in results[0][2]
    assert results[1][1] and "you have not read it" in results[1][2]
    assert not results[3][1] and not results[4][1]
    assert (tmp_path / "ws" / "a.txt").read_text() == "dos\n"


def test_a_change_since_the_read_makes_it_unread_again(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("one\n")
    runtime = NativeRuntime(str(tmp_path / "ws"))
    turns = [{"toolCalls": [read("a.txt")]}, {"text": "read it"},
             {"toolCalls": [edit("a.txt", "one", "uno")]}, {"text": "done"}]
    s = Session.from_options(json.dumps({"model": {"api": "scripted", "turns": turns}}),
                             runtime)
    run(s)
    s.fs('{"op": "writeFile", "path": "a.txt"}', b"one, changed by the page\n")
    run(s, "edit it", "r2")
    name, is_error, output = outputs(runtime)[-1]
    assert name == "edit" and is_error and "changed since you last read it" in output
    assert (tmp_path / "ws" / "a.txt").read_text() == "one, changed by the page\n"


def test_files_the_model_created_are_its_own(tmp_path):
    s, rt = make(tmp_path, [write("new.txt", "a\n"), edit("new.txt", "a", "b"),
                            write("new.txt", "c\n")])
    run(s)
    assert [r[1] for r in outputs(rt)] == [False, False, False]


def test_read_before_write_can_be_turned_off(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("one\n")
    s, _rt = make(tmp_path, [write("a.txt", "two\n")], readBeforeWrite=False)
    run(s)
    assert (tmp_path / "ws" / "a.txt").read_text() == "two\n"
