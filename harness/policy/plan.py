"""Plan mode: a run that may look but not touch (``h.prompt(text, {mode: "plan"})``).

Its answer is a plan for the page to review; nothing in ``/work`` changes while it runs,
whatever the model tries. That holds at two points:

- **the tools it is offered**: ``read``, ``ls``, ``grep``, ``find``, ``skill``, the
  page's tools marked ``readOnly`` (the page vouches for them: they run on the page),
  and the shell only when the page names read-only commands (``plan.commands``). A
  call of any other tool is an unknown tool's error result: it never runs.
- **where the shell's effects happen** (:class:`PlanGate`, in front of the permission
  rules): each simple command as the sandbox's interpreter is about to run it, with its
  words expanded, must match one of ``plan.commands`` (the permission rules' glob
  matching), and any change a command made to its copy of ``/work`` is refused when it
  would come back (so ``cat a > b`` under an allowed ``cat *`` changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..runtime import CommandGate
from ..tools.base import Tool, ToolSet
from ..workspace.jail import Workspace
from .permissions import Rules

READ_ONLY_BUILTINS = ("read", "ls", "grep", "find")
PLAN_PROMPT = """\
# Plan mode

This run is for planning only. You can read the workspace (read, ls, grep, find and the
other tools you are given) but nothing you do can change it: tools that write are not
available, and any change a command makes is thrown away. Investigate what you need,
then answer with a plan: a short numbered list of the steps you would take (the files
to change and how, the commands to run, how to check the result), and any question the
user must answer first. The user reviews the plan; once approved, it is carried out in
a normal run."""


def plan_tools(tools: Iterable[Tool], read_only: Callable[[Tool], bool]) -> ToolSet:
    """The tools a plan run is offered: those ``read_only`` vouches for."""
    return ToolSet(tool for tool in tools if read_only(tool))


def plan_rules(shell: str, commands: Sequence[str]) -> Rules:
    """``plan.commands`` as a rule of the shell tool: each pattern allowed, the rest denied."""
    return Rules.parse({shell: {**dict.fromkeys(commands, "allow"), "*": "deny"}},
                       {shell: "command"})


@dataclass
class PlanGate:
    """The shell's gate in a plan run: ``plan.commands`` before each command (then the
    page's own rules, ``inner``), and no change taken into ``/work``."""

    rules: Rules
    tool: str
    inner: CommandGate | None
    asks_commands: bool = True
    asks_writes: bool = True

    async def command(self, text: str, argv: Sequence[str] = ()) -> str | None:
        if self.rules.decide_run(self.tool, text, frozenset()).action != "allow":
            return ("not run in plan mode: only the page's read-only commands run while "
                    "planning (plan.commands); put it in the plan instead")
        if self.inner is not None and self.inner.asks_commands:
            return await self.inner.command(text, argv)
        return None

    async def writes_of(self, workspace: Workspace, paths: Iterable[str],
                        contents: dict[str, bytes]) -> str | None:
        changed = sorted(set(paths))
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more"
                                               if len(changed) > 5 else "")
            return (f"plan mode: nothing in /work may change while planning, so the "
                    f"command's changes were not applied ({shown})")
        return None
