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
        return journal.cause(info.call.id, capture=capture)

    return ToolHooks(around=around)


def approvals_gate(approvals: Approvals) -> ToolHooks:
    """Ask the permission rules before a valid call runs (their refusal is its result)."""

    def gate(info: CallInfo) -> Gate:
        shown = info.arguments if isinstance(info.arguments, dict) else {}

        async def check(tool: Tool, params: Any) -> str | None:
            return await approvals.check(info.emit, info.call.id, shown, tool, params,
                                         info.context)

        return check

    return ToolHooks(gate=gate)


def announce_files(announce: Callable[[str, str, str], None]) -> ToolHooks:
    """Tell ``announce`` (run id, call id, tool) when a call is over, also when it was
    cancelled, so that what it changed goes to the page before the call's tool_end."""

    def after(info: CallInfo, outcome: ToolOutcome | None) -> None:
        announce(info.emit.run_id, info.call.id, info.call.name)

    return ToolHooks(after=after)
