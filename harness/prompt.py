"""The default system prompt, with a section generated from the actual configuration."""

from __future__ import annotations

from collections.abc import Sequence

from .config import ShellConfig
from .workspace.paths import MOUNT

BASE = """You are a coding agent working inside a web page. You read, write and edit \
files with your tools and answer the user concisely.

Guidelines:
- Look before you change: use ls, find and grep to explore, read to see a file.
- Use edit for targeted changes (each oldText must match exactly once) and write for \
new files or complete rewrites.
- Paths are relative to the workspace; keep your answers short and say what you changed."""


def environment_section(tool_names: Sequence[str], shell: ShellConfig | None = None,
                        commands: Sequence[str] = (),
                        packages: Sequence[tuple[str, str]] = ()) -> str:
    tools = ", ".join(tool_names) if tool_names else "none"
    lines = [
        "Environment:",
        f"- The workspace is {MOUNT}; it is your working directory and you can reach no "
        "file outside it.",
        f"- Tools available: {tools}. There is no network access.",
        *shell_lines(shell, commands, packages),
        "- Files live in the page's memory: the user sees them only if the page shows them.",
    ]
    return "\n".join(lines)


def shell_lines(config: ShellConfig | None, commands: Sequence[str],
                packages: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The shell's part of the Environment section (``config`` None: there is none);
    ``packages``: what the bundle's package index ships, (name, version) each."""
    if config is None:
        return ["- There is no shell: use the file tools."]
    shown = ", ".join(commands) if commands else "the usual coreutils"
    if config.network is None:
        network = "No network."
    else:
        methods = ", ".join(config.network.methods)
        network = (
            "Network only to these URL prefixes: " + ", ".join(config.network.allow)
            + f" ({methods}; no cookies; redirects are not followed) with `curl`, or in "
            "python3: `import pyharness_net; r = pyharness_net.fetch(url, method='GET', "
            "headers=None, body=None)` (r.status, r.headers, r.body bytes, r.text(), r.json()).")
    return [
        f"- The {config.name} tool runs a sandboxed bash (just-bash) over the same files: "
        f"/work (working directory) and /tmp; nothing else exists. " + network,
        f"- Commands: {shown}.",
        "- python3 is real CPython 3.14 (Pyodide) with the standard library; it sees the "
        "same files. " + packages_line(config, packages),
        f"- Limits per call: {config.timeout_ms} ms (exit 124), {config.max_commands} "
        f"commands or loop iterations (exit 126), output cut to {config.max_output} "
        f"characters per stream, {config.max_output_bytes} bytes written at most.",
    ]


def packages_line(config: ShellConfig, packages: Sequence[tuple[str, str]]) -> str:
    """What python3 has beyond the standard library and how to get more, from the real
    configuration (the bundle's index, the indexes the page allows)."""
    indexes = config.packages.index_urls if config.packages else []
    if not packages and not indexes:
        return ("No third-party package is installed and none can be installed (this page "
                "ships none and allows no package index).")
    where = []
    if packages:
        where.append("this page's own index, offline: "
                     + ", ".join(f"{name} {version}" for name, version in packages))
    if indexes:
        where.append("the package index(es) " + ", ".join(indexes))
    return ("Nothing beyond the standard library is preinstalled; install with `pip install "
            "NAME` (also `pip install -r requirements.txt`, `pip list`, `pip show`, `pip "
            "uninstall`; or `await micropip.install('NAME')` in python3) from "
            + "; and from ".join(where) + ". Only pure-Python wheels and wheels built for "
            "Pyodide 314 install; what you install stays installed for later commands.")


def system_prompt(tool_names: Sequence[str], override: str | None = None,
                  shell: ShellConfig | None = None, commands: Sequence[str] = (),
                  packages: Sequence[tuple[str, str]] = ()) -> str:
    head = BASE if override is None else override
    return f"{head}\n\n{environment_section(tool_names, shell, commands, packages)}"
