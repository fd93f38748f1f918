"""The shell tool: the model's ``bash``, each command line run by the runtime's
:class:`~harness.runtime.ShellRunner` (in the browser, just-bash in the sandbox).

The Python side owns the tool (its schema, its description and how results read to the
model); running a command line is the runner's job, because just-bash is JavaScript.
The session adds this tool only where the runtime has a runner, so the tool always has
one. Its options are :class:`harness.config.ShellConfig`; what the system prompt says
about the shell is in :mod:`harness.prompt`.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import Field

from ..config import ShellConfig
from ..errors import ToolError
from ..runtime import CommandGate, ShellResult, ShellRunner
from .base import Tool, ToolContext
from .common import StrictParams


def clip(text: str, limit: int) -> str:
    """Keep the head and the tail of ``text`` within ``limit`` characters, with a marker
    in the middle saying how much was cut. Works on characters, so a UTF-8 sequence is
    never split."""
    if len(text) <= limit:
        return text
    keep = max(limit - 60, 2)  # leave room for the marker itself
    head = keep // 2
    tail = keep - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut; {len(text)} in all ...]\n{text[-tail:]}"


def format_result(result: ShellResult, max_output: int, timeout_ms: int) -> tuple[str, bool]:
    """What the model reads: stdout, a ``[stderr]`` section, ``[exit N]`` when non-zero.
    A non-zero exit makes it an error result."""
    parts = []
    if result.stdout:
        parts.append(clip(result.stdout, max_output).rstrip("\n"))
    stderr = result.stderr
    if result.timed_out:
        stderr += f"bash: timed out after {timeout_ms} ms (the shell's timeoutMs)\n"
    if stderr:
        parts.append("[stderr]\n" + clip(stderr, max_output).rstrip("\n"))
    if result.exit_code != 0:
        parts.append(f"[exit {result.exit_code}]")
    if not parts:
        return "(no output)", False
    return "\n".join(parts), result.exit_code != 0


class CommandParams(StrictParams):
    command: str = Field(description="The bash command line to run in /work")


class ShellTool(Tool):
    name = "bash"
    description = ""
    Params = CommandParams
    subject_kind = "command"

    def subject(self, params: CommandParams, ctx: ToolContext) -> str | None:
        return params.command

    def __init__(self, config: ShellConfig, runner: ShellRunner) -> None:
        self.config = config
        self.runner = runner
        # The permission rules as each line runs (harness/policy/enforce.py; set by the session).
        self.gates: Callable[[str], CommandGate | None] | None = None
        self.name = config.name  # the page may rename the tool
        network = ("curl and pyharness_net.fetch in python3 reach only "
                   + ", ".join(config.network.allow)) if config.network else "no network"
        self.description = (
            "Run a bash command line in /work (a sandboxed shell: coreutils, grep, sed, awk, "
            f"jq, find, diff, python3 with the standard library and pip; {network}). Returns "
            "stdout, then [stderr] and [exit N] when there are any. Each stream is cut to "
            f"{config.max_output} characters, keeping its head and tail; a call stops after "
            f"{config.timeout_ms} ms (exit 124) or {config.max_commands} commands or loop "
            "iterations (exit 126). Use read/write/edit for files; use this to run things."
        )

    async def run(self, params: CommandParams, ctx: ToolContext) -> str:
        gate = None if self.gates is None else self.gates(params.command)
        result = await self.runner.run(params.command, gate)
        text, failed = format_result(result, self.config.max_output, self.config.timeout_ms)
        if failed:
            raise ToolError(text)
        return text
