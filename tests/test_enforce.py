"""The rules at the points of effect, on CPython: a runtime command judged by the
``bash`` rule (harness/policy/enforce.py), the ``write`` rule on a command's paths, a ``read``
deny kept from the sandbox's copy (harness/workspace/sandbox.py) and from ls, grep and find. The
browser rows (e2e/test_enforce.py) attack the same through the real sandbox."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.events import Emitter
from harness.policy.approvals import Approvals
from harness.policy.enforce import CURRENT_CALL, CallScope, ShellRules
from harness.policy.permissions import Rules
from harness.tools.base import ToolContext, ToolSet
from harness.tools.search import FindTool, GrepTool, LsTool
from harness.workspace.jail import Workspace

KINDS: dict[str, Any] = {"bash": "command", "write": "path", "read": "path"}


class Page:
    """The page's onApproval: denies subjects containing ``refuse``, else "once"."""

    def __init__(self, refuse: str = "rm") -> None:
        self.refuse = refuse
        self.asked: list[dict[str, Any]] = []

    async def ask(self, request_json: str) -> tuple[str, str | None]:
        request = json.loads(request_json)
        self.asked.append(request)
        if self.refuse in (request["subject"] or ""):
            return "deny", "no"
        return "once", None


def rules_of(permissions: dict[str, Any], page: Page | None = None) -> ShellRules:
    approvals = Approvals(Rules.parse(permissions, KINDS), page or Page(), 5_000)
    return ShellRules(approvals, "bash")


def in_call(shell: ShellRules, line: str, fn: Any) -> Any:
    """``fn(gate)`` (a coroutine function) with the gate of ``line``, made in a tool
    call of a run as the shell tool makes it."""

    async def main() -> Any:
        CURRENT_CALL.set(CallScope(Emitter("r1", lambda e: None), "call_1"))
        return await fn(shell.for_line(line))

    return asyncio.run(main())


def test_a_runtime_command_is_matched_whole_and_asked_when_a_rule_says_so() -> None:
    page = Page()
    shell = rules_of({"bash": {"*": "ask", "echo *": "allow", "git push *": "deny"}}, page)

    async def calls(gate: Any) -> list[str | None]:
        return [await gate.command("echo hi"), await gate.command("rm x"),
                await gate.command("ls -la"), await gate.command("git push origin")]

    answers = in_call(shell, "echo $(c=r; ${c}m x)", calls)
    assert answers[0] is None and answers[2] is None
    assert answers[1] == "denied by the user: no"
    assert answers[3] == 'denied by the permission rule bash: "git push *"'
    assert [r["subject"] for r in page.asked] == ["rm x", "ls -la"]  # never the deny rule's


def test_a_command_the_line_shows_literally_is_not_asked_twice() -> None:
    page = Page()
    shell = rules_of({"bash": {"*": "ask"}}, page)

    async def calls(gate: Any) -> list[str | None]:
        return [await gate.command("mkdir -p d", ["mkdir", "-p", "d"]),
                await gate.command("echo a b", ["echo", "a b"]),
                await gate.command("ls /work", ["ls", "/work"]),
                await gate.command("echo a b", ["echo", "a", "b"])]

    answers = in_call(shell, "mkdir -p d && echo 'a b' > d/f; ls $HOME", calls)
    assert answers == [None, None, None, None]
    # $HOME: shown as it ran; "echo a b" of two words is not the line's one word "a b"
    assert [r["subject"] for r in page.asked] == ["ls /work", "echo a b"]


def test_a_command_past_the_bound_is_refused_unasked() -> None:
    page = Page(refuse="zzz")
    shell = rules_of({"bash": {"*": "ask", "echo *": "allow"}}, page)
    answer = in_call(shell, "x", lambda gate: gate.command("echo " + "a" * 100_001))
    assert answer is not None and "too long to check" in answer
    assert page.asked == []


def test_outside_a_call_an_ask_is_refused() -> None:
    gate = rules_of({"bash": "ask"}).for_line("x")
    assert asyncio.run(gate.command("ls")) is not None


def test_the_write_rule_on_a_commands_paths(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "w")
    Path(ws.root, "docs").mkdir()
    Path(ws.root, "docs", "a.md").write_text("old\n")
    page = Page(refuse="b.md")
    shell = rules_of({"write": {"*": "allow", "docs/**": "ask", "locked/**": "deny"}}, page)

    def writes(paths: list[str], contents: dict[str, bytes]) -> Any:
        return in_call(shell, "cmd", lambda gate: gate.writes_of(ws, paths, contents))

    assert writes(["/work/x.txt"], {"/work/x.txt": b"x"}) is None
    assert "locked/k: denied by the permission rule write" in writes(
        ["/work/x.txt", "/work/locked/k"], {})
    assert writes(["/work/docs/a.md"], {"/work/docs/a.md": b"new\n"}) is None
    assert "-old" in page.asked[-1]["diff"] and "+new" in page.asked[-1]["diff"]
    assert writes(["/work/docs/b.md"], {"/work/docs/b.md": b"b"}) == "denied by the user: no"


@pytest.mark.parametrize("tool, args", [
    (GrepTool(), {"pattern": "TOPSECRET"}),
    (GrepTool(), {"pattern": "TOPSECRET", "glob": "**/*.txt"}),
    (FindTool(), {"pattern": "*"}),
    (FindTool(), {"pattern": "**/key*"}),
    (LsTool(), {"path": "secret"}),
])
def test_ls_grep_and_find_leave_out_what_the_read_rule_denies(
        tmp_path: Path, tool: Any, args: dict[str, Any]) -> None:
    ws = Workspace(tmp_path / "w")
    os.makedirs(os.path.join(ws.root, "secret"))
    Path(ws.root, "secret", "key.txt").write_text("TOPSECRET\n")
    Path(ws.root, "a.txt").write_text("no secret here\n")
    rules = Rules.parse({"read": {"*": "allow", "secret/**": "deny"}}, KINDS)
    ctx = ToolContext(ws, hidden=lambda rel: rules.denies("read", rel))
    outcome = asyncio.run(ToolSet([tool]).execute(tool.name, args, ctx))
    assert "TOPSECRET" not in outcome.output and "key.txt" not in outcome.output
    assert "left out" in outcome.output


@pytest.mark.parametrize("tool, args", [
    (GrepTool(), {"pattern": "x", "path": "secret/key.txt"}),
    (GrepTool(), {"pattern": "x", "path": "secret/nokey.txt"}),
    (LsTool(), {"path": "secret/sub"}),
    (LsTool(), {"path": "secret/nosub"}),
    (FindTool(), {"pattern": "*", "path": "secret/sub"}),
])
def test_a_denied_path_asked_for_is_refused_whether_it_exists_or_not(
        tmp_path: Path, tool: Any, args: dict[str, Any]) -> None:
    ws = Workspace(tmp_path / "w")
    os.makedirs(os.path.join(ws.root, "secret", "sub"))
    Path(ws.root, "secret", "key.txt").write_text("TOPSECRET\n")
    rules = Rules.parse({"read": {"*": "allow", "secret/**": "deny"}}, KINDS)
    ctx = ToolContext(ws, hidden=lambda rel: rules.denies("read", rel))
    outcome = asyncio.run(ToolSet([tool]).execute(tool.name, args, ctx))
    assert outcome.is_error
    assert outcome.output == f"EACCES: /work/{args['path']}: the page's permission rules " \
                             "deny reading it"


def test_edit_reads_what_it_changes_so_a_read_deny_refuses_it_and_write_shows_no_old_text(
        tmp_path: Path) -> None:
    from harness.tools.fileio import EditTool, WriteTool
    ws = Workspace(tmp_path / "w")
    os.makedirs(os.path.join(ws.root, "secret"))
    Path(ws.root, "secret", "key.txt").write_text("TOPSECRET\n")
    rules = Rules.parse({"read": {"*": "allow", "secret/**": "deny"}}, KINDS)
    ctx = ToolContext(ws, hidden=lambda rel: rules.denies("read", rel))
    for old in ("TOP", "not in it"):
        args = {"path": "secret/key.txt", "edits": [{"oldText": old, "newText": "x"}]}
        outcome = asyncio.run(ToolSet([EditTool()]).execute("edit", args, ctx))
        assert outcome.is_error and "deny reading it" in outcome.output
        assert "TOPSECRET" not in outcome.output
    write = WriteTool()
    diff = write.preview(write.parse({"path": "secret/key.txt", "content": "new\n"}), ctx)
    assert diff is not None and "TOPSECRET" not in diff and "+new" in diff
    assert Path(ws.root, "secret", "key.txt").read_text() == "TOPSECRET\n"
