"""The hooks the Session wraps every tool call in (harness/agent.py, ``ToolHooks``).

The agent loop knows none of these concerns: the journal's cause (what a call changes
in /work is recorded under its call id, with pre-images for the run's checkpoint), the
permission rules asked before a valid call runs, and the file_change announcements
after it. Each is one small hook; the Session chooses and orders them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from .agent import CallInfo, ToolHooks
from .policy.approvals import Approvals
from .tools.base import Gate, Tool, ToolOutcome
from .workspace.journal import Journal


def journal_cause(journal: Journal, capture: bool) -> ToolHooks:
    """Record what a call changes under its call id; ``capture``: keep the pre-images
    (for the run's checkpoint)."""

    def around(info: CallInfo) -> contextlib.AbstractContextManager[object]:
        return journal.cause(cause_of(info), capture=capture)

    return ToolHooks(around=around, resume=journal.resume)


def approvals_gate(approvals: Approvals) -> ToolHooks:
    """Ask the permission rules before a valid call runs (their refusal is its result)."""

    def gate(info: CallInfo) -> Gate:
        shown = info.arguments if isinstance(info.arguments, dict) else {}

        async def check(tool: Tool, params: Any) -> str | None:
            return await approvals.check(info.emit, info.call.id, shown, tool, params,
                                         info.context)

        return check

    return ToolHooks(gate=gate)


def cause_of(info: CallInfo) -> str:
    """A call's cause in the journal: its id in a run the page started; in a subagent's
    run, ``<run id>/<call id>``, so that the calls of subagents running at once never
    share a cause (a model may number its calls as another does) and what a subagent
    changed (its own subagents' changes included) is told by its run id as a prefix
    (harness/workspace/checkpoints.py)."""
    return info.call.id if info.emit.depth == 0 else f"{info.emit.run_id}/{info.call.id}"


def announce_files(announce: Callable[[str, str, str, str], None]) -> ToolHooks:
    """Tell ``announce`` (run id, cause, call id, tool) when a call is over, also when it
    was cancelled, so that what it changed goes to the page before the call's tool_end."""

    def after(info: CallInfo, outcome: ToolOutcome | None) -> None:
        announce(info.emit.run_id, cause_of(info), info.call.id, info.call.name)

    return ToolHooks(after=after)
