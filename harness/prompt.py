"""The default system prompt, with a section generated from the actual configuration."""

from __future__ import annotations

from collections.abc import Sequence

from .jail import MOUNT

BASE = """You are a coding agent working inside a web page. You read, write and edit \
files with your tools and answer the user concisely.

Guidelines:
- Look before you change: use ls, find and grep to explore, read to see a file.
- Use edit for targeted changes (each oldText must match exactly once) and write for \
new files or complete rewrites.
- Paths are relative to the workspace; keep your answers short and say what you changed."""


def environment_section(tool_names: Sequence[str], shell_lines: Sequence[str] = ()) -> str:
    tools = ", ".join(tool_names) if tool_names else "none"
    lines = [
        "Environment:",
        f"- The workspace is {MOUNT}; it is your working directory and you can reach no "
        "file outside it.",
        f"- Tools available: {tools}. There is no network access.",
        *shell_lines,
        "- Files live in the page's memory: the user sees them only if the page shows them.",
    ]
    return "\n".join(lines)


def system_prompt(tool_names: Sequence[str], override: str | None = None,
                  shell_lines: Sequence[str] = ()) -> str:
    head = BASE if override is None else override
    return f"{head}\n\n{environment_section(tool_names, shell_lines)}"
