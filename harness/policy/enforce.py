"""The permission rules where a shell command's effects happen.

The rules' first pass (:mod:`harness.policy.approvals`) judges a ``bash`` call on the text of
its line before it runs. That pass is cheap and shows the user the line, but bash
decides what runs only as it expands words (a parameter or arithmetic expansion, a
variable set earlier on the line, a function), so the text is never the last word.
This module is the second pass, at the points of effect:

- **each simple command**, as the sandbox's interpreter is about to run it: its name and
  its expanded arguments (shell/sandbox.mjs asks before every command of its registry
  runs: in a substitution, a function, a subshell, a pipeline, ``eval``, ``xargs``
  alike), judged by the ``bash`` rule (:meth:`Rules.decide_run`);
- **each path a command writes** (created, changed or removed), judged by the ``write``
  rule when the command's changes are taken into ``/work``: a deny refuses all of the
  command's changes, an ask asks the page once for the paths it names;
- **the paths the ``read`` rule denies** are never sent to the sandbox, and a command's
  change at, below or above one (``rm -r`` of a folder that holds one) is refused.

An ``ask`` here goes to the page as an ``approval_request`` of the running call, whose
``subject`` is the command as it runs (or the paths as written). A command the user
already approved for this call, word for word and with nothing to expand, is not asked
again.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import events as ev
from ..events import Emitter
from ..limits import shorten
from ..tools.common import as_text
from ..tools.fileio import approval_diff
from ..workspace.jail import Workspace
from ..workspace.paths import MOUNT
from . import shellwords
from .approvals import Approvals

MAX_SUBJECT_CHARS = 100_000  # a command longer than this is refused, never asked about cut


@dataclass(frozen=True)
class CallScope:
    """The tool call now running: where its approval events go."""

    emit: Emitter
    call_id: str


CURRENT_CALL: contextvars.ContextVar[CallScope | None] = contextvars.ContextVar(
    "pyharness_current_call", default=None)


@dataclass
class LineGate:
    """The rules for one command line of the running call (given to the shell runner).

    ``asks_commands`` / ``asks_writes``: whether the sandbox must ask before each
    command / the harness before taking the command's writes (False when no rule could
    object)."""

    approvals: Approvals
    tool: str  # the shell tool's name (the page may rename it): its rule is the one
    line: str
    scope: CallScope | None
    asks_commands: bool
    asks_writes: bool
    _approved: frozenset[tuple[str, ...]] = field(default_factory=frozenset)
    _asked_paths: set[str] = field(default_factory=set)

    async def command(self, text: str, argv: Sequence[str] = ()) -> str | None:
        """None when the command may run; else why not (the sandbox prints it).
        ``text``: its words joined by spaces, as the rules match it; ``argv``: the same
        words one by one (a literal command of the line is recognised by these)."""
        rules = self.approvals.rules
        if len(text) > MAX_SUBJECT_CHARS:
            return (f"the command is {len(text):,} characters, more than "
                    f"{MAX_SUBJECT_CHARS:,}: too long to check against the page's rules")
        verdict = rules.decide_run(self.tool, text, self.approvals.granted)
        if verdict.action == "allow":
            return None
        if verdict.action == "deny":
            self._emit_result("deny", "rule", f"{shorten(text, 200)}: denied by the "
                              f"permission rule {verdict.rule}")
            return f"denied by the permission rule {verdict.rule}"
        if tuple(argv) in self._approved:
            return None  # the user approved this very command in the line it came in
        return await self._ask(self.tool, {"command": text}, text, verdict.rule or self.tool,
                               verdict.patterns, None)

    async def writes_of(self, workspace: Workspace, paths: Iterable[str],
                        contents: dict[str, bytes]) -> str | None:
        """None when every path may be written; else why the command's changes are
        refused. ``paths``: /work paths created, changed or removed; ``contents``: the
        new bytes of the files among them (for the diff the page is shown)."""
        rules = self.approvals.rules
        asking: list[str] = []
        patterns: list[str] = []
        for path in sorted(set(paths)):
            rel = _relative(path)
            verdict = rules.decide("write", rel, self.approvals.granted)
            if verdict.action == "deny":
                why = f"{rel}: denied by the permission rule {verdict.rule}"
                self._emit_result("deny", "rule", why)
                return why
            if verdict.action == "ask" and path not in self._asked_paths:
                asking.append(path)
                patterns += verdict.patterns
        if not asking:
            return None
        rels = [_relative(p) for p in asking]
        diff = _diff(workspace, asking, contents)
        rule = f"write: {', '.join(repr(p) for p in dict.fromkeys(patterns)) or '(no pattern)'}"
        refusal = await self._ask("write", {"paths": rels, "command": self.line},
                                  ", ".join(rels), rule, tuple(dict.fromkeys(patterns)), diff)
        if refusal is None:
            self._asked_paths.update(asking)
        return refusal

    async def _ask(self, tool: str, shown: dict[str, Any], subject: str, rule: str,
                   patterns: tuple[str, ...], diff: str | None) -> str | None:
        scope = self.scope
        if scope is None:  # no call to ask for (a test's runner): fail closed
            return "it needs the page's approval, and no call is running to ask for"
        request = {"runId": scope.emit.run_id, "callId": scope.call_id, "tool": tool,
                   "input": shown, "rule": rule, "subject": subject, "diff": diff}
        scope.emit(ev.ApprovalRequest, call_id=scope.call_id, tool=tool, input=shown,
                   rule=rule, subject=subject, diff=diff)
        decision, message, by = await self.approvals._answer(scope.emit, scope.call_id, request)
        scope.emit(ev.ApprovalResult, call_id=scope.call_id, decision=decision, by=by,
                   message=message)
        if decision == "always":
            self.approvals.granted.update((tool, p) for p in patterns)
        if decision in ("once", "always"):
            return None
        if by == "timeout":
            return str(message)
        return f"denied by the user: {message or 'no reason given'}"

    def _emit_result(self, decision: str, by: str, message: str) -> None:
        if self.scope is not None:
            self.scope.emit(ev.ApprovalResult, call_id=self.scope.call_id, decision=decision,
                            by=by, message=message)


class ShellRules:
    """The ``bash``, ``write`` and ``read`` rules as the shell runner applies them."""

    def __init__(self, approvals: Approvals, tool: str) -> None:
        self.approvals = approvals
        self.tool = tool
        self.reads_denied = approvals.rules.has_rule("read")

    def for_line(self, line: str) -> LineGate:
        """The gate of one shell call's line, in the call now running."""
        rules = self.approvals.rules
        approved: frozenset[tuple[str, ...]] = frozenset()
        if rules.has_rule(self.tool):
            # The call runs, so the line's first pass allowed it or the page approved
            # it: a command it names literally needs no second question.
            commands = shellwords.split(line) or []
            approved = frozenset(c.argv for c in commands if c.literal and c.argv)
        return LineGate(self.approvals, self.tool, line, CURRENT_CALL.get(),
                        rules.has_rule(self.tool), rules.has_rule("write"), approved)

    def hidden(self, path: str) -> bool:
        """Whether the ``read`` rule denies the /work ``path`` (it is kept from the
        sandbox, from ls, grep and find)."""
        return self.reads_denied and self.approvals.rules.denies("read", _relative(path))


def _relative(path: str) -> str:
    """A /work path as the rules match it: relative to /work, the root is ``.``."""
    if path == MOUNT:
        return "."
    return path[len(MOUNT) + 1:] if path.startswith(MOUNT + "/") else path


def _diff(workspace: Workspace, paths: list[str], contents: dict[str, bytes]) -> str:
    """What taking the command's writes to ``paths`` would change, for the page."""
    parts: list[str] = []
    for path in paths[:50]:
        rel = _relative(path)
        try:
            real = workspace.resolve(path).real
        except Exception:  # refused by the jail: the apply refuses it with the reason
            continue
        before: bytes | None = None
        if os.path.isfile(real):
            with open(real, "rb") as f:
                before = f.read()
        after = contents.get(path)
        if after is None:
            parts.append(f"{rel}: removed" if os.path.lexists(real) else f"{rel}: folder")
            continue
        text = as_text(after)
        if text is None:
            parts.append(f"{rel}: {len(after):,} bytes of binary data")
            continue
        parts.append(approval_diff(rel, before, text))
    if len(paths) > 50:
        parts.append(f"... and {len(paths) - 50} more paths")
    return "\n".join(parts)
