"""Subagents: the ``task`` tool, offered when the page turns them on (``subagents``).

The model gives a prompt (and optionally the tools to use, or a read-only flag); a
subagent runs it with a fresh conversation, the parent's system prompt (project
instructions and skills included) and the same workspace, and its final answer (bounded)
is the call's result. Its run is the parent's in everything that governs it:

- **events**: its own run id (``<parent run>/<call id>``), each event stamped with
  ``parentRunId``, ``parentCallId`` and ``depth``, sent as they happen;
- **cancel**: it runs inside the parent's call, so cancelling the parent cancels it;
- **budgets**: its meter counts into its own run scope (the page's ``subagents.budget``,
  lowered by the model's ``budget``) and into every scope of its parent's; a subagent
  stopped by its own budget is an error result, and the parent goes on;
- **permissions, approvals, checkpoints**: its tool calls go through the same hooks, so
  the rules apply as in the parent and what it changes is in the parent run's
  checkpoint (``h.revert`` and ``h.diff`` of the parent cover it).

Several ``task`` calls of one model turn run at once (harness/agent.py), at most
``maxConcurrent`` of a run at a time (the rest wait for a slot); ``maxDepth`` bounds the
nesting: at the last level the tool is not offered.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from .budget import Meter
from .config import BudgetLimits
from .errors import ToolError
from .limits import MAX_PROMPT_CHARS
from .tools.base import Tool, ToolContext

SUBAGENT_PROMPT = """\
# You are a subagent

Another agent delegated the task below to you. Do it with the tools you have, then
answer with a short report for that agent: what you did, what you found, the files you
changed. Your answer is all it sees of your work."""


@dataclass
class RunInfo:
    """The run now in progress in this task's context: what a ``task`` call of it needs."""

    run_id: str
    depth: int  # 0: a run the page started
    meter: Meter
    system_prompt: str
    slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(4))


CURRENT_RUN: contextvars.ContextVar[RunInfo | None] = contextvars.ContextVar(
    "pyharness_current_run", default=None)


class TaskParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS,
                        description="The task, complete in itself: the subagent sees nothing "
                        "of this conversation.")
    tools: list[Annotated[str, Field(max_length=64)]] | None = Field(
        default=None, max_length=50,
        description="The tools it may use, by name (default: all of yours).")
    read_only: bool = Field(default=False, description="Only tools that change nothing "
                            "(read, ls, grep, find...): for research.")
    budget: BudgetLimits | None = Field(default=None, description="Limits for this subagent "
                                        "(tokens, requests, toolCalls, timeMs, cost), within "
                                        "the page's.")


class TaskTool(Tool):
    name = "task"
    Params = TaskParams
    concurrent = True  # several calls of one turn run at once (harness/agent.py)

    def __init__(self, spawn: Callable[[TaskParams], Awaitable[str]], max_concurrent: int) -> None:
        self._spawn = spawn
        self.description = (
            "Delegate a self-contained task to a subagent with a fresh conversation, the "
            "same workspace and your tools; returns its final answer. Use it for work that "
            "needs many steps but whose details you do not need (research across files, a "
            f"change in one area). Several task calls in one answer run at once (up to "
            f"{max_concurrent}).")

    async def run(self, params: TaskParams, ctx: ToolContext) -> str:
        return await self._spawn(params)


def lowered(page: BudgetLimits | None, model: BudgetLimits | None) -> BudgetLimits | None:
    """The stricter of the page's and the model's limits, kind by kind."""
    if page is None or model is None:
        return page or model
    merged = {}
    for name in BudgetLimits.model_fields:
        values = [v for v in (getattr(page, name), getattr(model, name)) if v is not None]
        merged[name] = min(values) if values else None
    return BudgetLimits(**merged)


def cancelled_meanwhile() -> bool:
    """Whether this task was asked to cancel (the subagent then ended "aborted")."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def bounded_answer(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return (f"{text[:half]}\n[... {len(text) - limit:,} characters of the subagent's answer "
            f"left out ...]\n{text[-half:]}")


def refuse(why: str) -> ToolError:
    return ToolError(f"The task was not run: {why}")
