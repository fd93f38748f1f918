"""The shell tool: the model's ``bash``, run by just-bash in the worker over ``/work``.

The Python side owns the tool (its schema, limits and how results read to the model);
running a command line is the runtime's job (:class:`harness.runtime.ShellRunner`),
because just-bash is JavaScript. On CPython there is no runner and the tool says so.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from .errors import ToolError
from .runtime import ShellResult
from .tools.base import Tool, ToolContext
from .tools.common import StrictParams

MIB = 1024 * 1024


HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]
SAFE_METHODS: list[HttpMethod] = ["GET", "HEAD"]


class NetworkPolicy(BaseModel):
    """``createHarness({network: {...}})``: what the model's code may fetch, through the
    page (checked there again: the page is the authority)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    allow: list[Annotated[str, Field(pattern=r"^https?://[^/?#@\s]+(/[^?#\s]*)?$",
                                     max_length=2000)]] = Field(
        min_length=1, max_length=100,
        description="Origins with an optional path prefix, e.g. https://api.example.com/data/")
    methods: list[HttpMethod] = Field(default_factory=lambda: list(SAFE_METHODS), min_length=1)
    max_response_bytes: int = Field(default=10 * MIB, ge=1024, le=100 * MIB)


class ShellConfig(BaseModel):
    """``createHarness({shell: {...}})``; ``shell: true`` takes every default."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = Field(default="bash", pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    timeout_ms: int = Field(default=10_000, ge=1, le=600_000)
    max_commands: int = Field(default=10_000, ge=1, le=10_000_000,
                              description="Commands per call; also the loop iteration limit.")
    max_output: int = Field(default=20_000, ge=100, le=10_000_000,
                            description="Characters of stdout (and of stderr) the model sees.")
    max_output_bytes: int = Field(default=8 * MIB, ge=1024, le=1024 * MIB,
                                  description="Bytes one call may write, to its output or files.")
    # Filled from the top-level ``network`` option (HarnessConfig.shell_config).
    network: NetworkPolicy | None = Field(default=None, exclude=True)


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

    def __init__(self, config: ShellConfig) -> None:
        self.config = config
        self.name = config.name  # the page may rename the tool
        network = ("curl and pyharness_net.fetch in python3 reach only "
                   + ", ".join(config.network.allow)) if config.network else "no network"
        self.description = (
            "Run a bash command line in /work (a sandboxed shell: coreutils, grep, sed, awk, "
            f"jq, find, diff, and python3 with the standard library; {network}). Returns "
            "stdout, then [stderr] and [exit N] when there are any. Each stream is cut to "
            f"{config.max_output} characters, keeping its head and tail; a call stops after "
            f"{config.timeout_ms} ms (exit 124) or {config.max_commands} commands or loop "
            "iterations (exit 126). Use read/write/edit for files; use this to run things."
        )

    async def run(self, params: CommandParams, ctx: ToolContext) -> str:
        if ctx.shell is None:
            raise ToolError(
                "There is no shell outside the browser: the bash tool runs in the page's "
                "worker (just-bash). Use the file tools instead."
            )
        result = await ctx.shell.run(params.command)
        text, failed = format_result(result, self.config.max_output, self.config.timeout_ms)
        if failed:
            raise ToolError(text)
        return text


def environment_lines(config: ShellConfig | None, commands: list[str]) -> list[str]:
    """The shell's part of the system prompt's Environment section."""
    if config is None:
        return ["- There is no shell: use the file tools."]
    shown = ", ".join(commands) if commands else "the usual coreutils"
    if config.network is None:
        network = ["No network."]
    else:
        methods = ", ".join(config.network.methods)
        network = [
            "Network only to these URL prefixes: " + ", ".join(config.network.allow)
            + f" ({methods}; no cookies; redirects are not followed) with `curl`, or in "
            "python3: `import pyharness_net; r = pyharness_net.fetch(url, method='GET', "
            "headers=None, body=None)` (r.status, r.headers, r.body bytes, r.text(), r.json())."]
    return [
        f"- The {config.name} tool runs a sandboxed bash (just-bash) over the same files: "
        f"/work (working directory) and /tmp; nothing else exists. " + network[0],
        f"- Commands: {shown}.",
        "- python3 is real CPython 3.14 (Pyodide) with the standard library only "
        "(no pip, no third-party packages); it sees the same files.",
        f"- Limits per call: {config.timeout_ms} ms (exit 124), {config.max_commands} "
        f"commands or loop iterations (exit 126), output cut to {config.max_output} "
        f"characters per stream, {config.max_output_bytes} bytes written at most.",
    ]
