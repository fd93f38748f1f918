"""Permission rules applied to tool calls, and the page asked when a rule says ``ask``.

The rules (harness/policy/permissions.py) are the page's ``permissions`` option, checked at
boot; each call is matched against them after its arguments are valid and before it
runs, on the harness's side: nothing the model writes reaches a decision except as the
subject a rule matches (its path after the jail, its command line). ``ask`` sends the
call to the page's ``onApproval`` (the runtime's :class:`~harness.runtime.Approver`);
no answer in time, a cancelled run or no page is a deny (fail closed). An ``always``
holds for this harness's life, for that tool and the pattern that matched; a ``deny``
rule still wins over it.

An answer covers what the page was shown: the diff of ``write``/``edit`` is computed
from the file as it is when asked, and :meth:`~harness.tools.base.Tool.basis` records
that state. After a ``once``/``always`` it is taken again; if the target changed while
the page decided (a page edit, a command, a delete, a rename into the path), the call
is refused with a result telling the model to read it again, whatever read before
overwrite says. The second look and the tool's own run follow each other with no
``await`` between them, so nothing can change the file in the gap.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .. import events as ev
from ..diffs import quote_name
from ..errors import FsError, ToolError
from ..events import Emitter
from ..runtime import Approver
from ..tools.base import Tool, ToolContext
from .permissions import Rules, Verdict


class Approvals:
    def __init__(self, rules: Rules, approver: Approver | None, timeout_ms: int) -> None:
        self.rules = rules
        self.approver = approver
        self.timeout_ms = timeout_ms
        self.granted: set[tuple[str, str]] = set()  # (tool, pattern) answered "always"

    async def check(self, emit: Emitter, call_id: str, arguments: dict[str, Any], tool: Tool,
                    params: Any, ctx: ToolContext) -> str | None:
        """None when the call may run; else the result the model gets instead."""
        if not self.rules.has_rule(tool.name):
            return None
        try:
            subject = tool.subject(params, ctx)
        except (FsError, ToolError):
            return None  # a path outside /work: the tool refuses it and changes nothing
        verdict = self.rules.decide(tool.name, subject, self.granted)
        if verdict.action == "allow":
            if self.granted and self.rules.decide(tool.name, subject).action == "ask":
                emit(ev.ApprovalResult, call_id=call_id, decision="always", by="rule",
                     message="allowed by an earlier 'always'")
            return None
        if verdict.action == "deny":
            why = f"denied by the permission rule {verdict.rule}"
            emit(ev.ApprovalResult, call_id=call_id, decision="deny", by="rule", message=why)
            return f"The call was not run: {why}. Do not retry it; do something else or ask " \
                   "the user."
        return await self._ask(emit, call_id, arguments, tool, params, ctx, subject, verdict)

    async def _ask(self, emit: Emitter, call_id: str, arguments: dict[str, Any], tool: Tool,
                   params: Any, ctx: ToolContext, subject: str | None,
                   verdict: Verdict) -> str | None:
        basis = _basis(tool, params, ctx)  # first: what the preview below is computed from
        try:
            diff = tool.preview(params, ctx)
        except (FsError, ToolError):
            diff = None  # the call will fail as it runs; the page decides on what it sees
        request = {"runId": emit.run_id, "callId": call_id, "tool": tool.name, "input": arguments,
                   "rule": verdict.rule or tool.name, "subject": subject, "diff": diff}
        emit(ev.ApprovalRequest, call_id=call_id, tool=tool.name, input=arguments,
             rule=request["rule"], subject=subject, diff=diff)
        decision, message, by = await self._answer(emit, call_id, request)
        emit(ev.ApprovalResult, call_id=call_id, decision=decision, by=by, message=message)
        if decision == "always":
            self.granted.update((tool.name, p) for p in verdict.patterns)
        if decision in ("once", "always"):
            if basis is not None and _basis(tool, params, ctx) != basis:
                what = "its target" if subject is None else quote_name(subject)
                return (f"The call was not run: {what} changed while the "
                        "user was deciding on it (by the page, a command or another run), so "
                        "the approval does not cover what it would change now. Read it again, "
                        "then retry if the change is still right.")
            return None
        if by == "timeout":
            return f"The call was not run: {message}."
        return f"The call was not run: denied by the user: {message or 'no reason given'}."

    async def _answer(self, emit: Emitter, call_id: str,
                      request: dict[str, Any]) -> tuple[str, str | None, str]:
        """(decision, message, by) for one request; CancelledError when the run is."""
        if self.approver is None:
            return "deny", "there is no page here to approve calls", "rule"
        try:
            async with asyncio.timeout(self.timeout_ms / 1000):
                decision, message = await self.approver.ask(json.dumps(request))
        except TimeoutError:
            return "deny", f"no answer within {self.timeout_ms:,} ms (approvalTimeoutMs)", \
                "timeout"
        except asyncio.CancelledError:
            emit(ev.ApprovalResult, call_id=call_id, decision="deny", by="cancel",
                 message="the run was cancelled")
            raise
        if decision not in ("once", "always", "deny"):  # the page's code checked it already
            return "deny", f"the page answered {decision[:40]!r}", "page"
        return decision, message, "page"


def _basis(tool: Tool, params: Any, ctx: ToolContext) -> str | None:
    try:
        return tool.basis(params, ctx)
    except (FsError, ToolError) as exc:
        return f"unresolvable: {exc}"
