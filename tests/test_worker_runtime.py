"""The worker's runtime (harness/runtime/pyodide.py) on CPython, with a stand-in for
worker.mjs's host object: the session gets its shell at construction, the sandbox's
client made through ``host.sandbox()`` and its commands known up front, so the system
prompt is a plain string that lists them. Nothing is connected later. (The real host
and sandbox: e2e/test_shell.py in Chromium.)"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.runtime import Storage
from harness.runtime.pyodide import JsRuntime
from harness.runtime.sandbox_shell import SandboxShell
from harness.runtime.scan_feed import ScanFeed
from harness.session import Session
from harness.workspace.jail import Workspace
from harness.workspace.journal import Journal


class Host(SimpleNamespace):
    """worker.mjs's ``host``: http, the page-tool calls, and the shell's two members."""

    def __init__(self, commands: list[str]) -> None:
        super().__init__(http=object(), callPageTool=None, cancelPageTool=None,
                         shellCommands=commands, shellPackages=[])
        self.clients: list[object] = []

    def sandbox(self) -> object:
        client = object()
        self.clients.append(client)
        return client


class Runtime(JsRuntime):
    """JsRuntime with its storage in a temporary directory instead of /work, keeping
    the shells it made."""

    def __init__(self, host: Host, root: Any) -> None:
        super().__init__(post=lambda message: None, host=host)
        self._storage = Storage(workspace=str(root / "work"))
        self.shells: list[SandboxShell] = []

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def journal(self) -> Journal:  # no worker.mjs feed here: the CPython journal
        if self._journal is None:
            (Path(self._storage.workspace)).mkdir(parents=True, exist_ok=True)
            self._journal = Journal(ScanFeed(self._storage.workspace))
        return self._journal

    def shell(self, config: Any, workspace: Any) -> SandboxShell:
        self.shells.append(super().shell(config, workspace))
        return self.shells[-1]


def session(tmp_path: Any, host: Host, **options: object) -> tuple[Session, Runtime]:
    config = json.dumps({"model": {"api": "scripted", "turns": []}, **options})
    runtime = Runtime(host, tmp_path)
    return Session.from_options(config, runtime), runtime


def test_the_shell_is_connected_at_construction(tmp_path):
    host = Host(["cat", "grep", "jq"])
    s, runtime = session(tmp_path, host, shell={"timeoutMs": 2500})
    assert len(host.clients) == 1 and len(runtime.shells) == 1
    assert runtime.shells[0].commands == ["cat", "grep", "jq"]
    assert "bash" in s.agent.tools.names()
    assert isinstance(s.system_prompt, str)
    assert "Commands: cat, grep, jq." in s.system_prompt


@pytest.mark.parametrize("options", [
    {},
    {"shell": True, "pageTools": [{"name": "bash", "description": "the page's own"}]},
])
def test_no_sandbox_client_without_the_shell(tmp_path, options):
    """Off, or replaced by a page tool of its name: the sandbox is never asked for, so
    worker.mjs has no client (and drops a sandbox_port)."""
    host = Host(["cat"])
    _, runtime = session(tmp_path, host, **options)
    assert host.clients == [] and runtime.shells == []


class Client:
    """The sandbox client's surface SandboxShell uses (embed/worker/sandbox-client.mjs),
    recording what it is asked to send: a stand-in, because the real one needs a
    sandbox (e2e/test_shell.py drives that)."""

    def __init__(self) -> None:
        self.generation = 0
        self.sent: list[tuple[str, dict[str, Any], bool]] = []
        self.on_ready: Any = None

    def watchReady(self, fn: Any) -> None:  # the JS name
        self.on_ready = fn

    async def ready(self) -> int:
        return self.generation

    async def run(self, command: str, limits: str, meta: str, packed: bytes, basis: int,
                  preload: bool = False, ask: Any = None) -> Any:
        self.sent.append((command, json.loads(meta), preload))
        changes = json.dumps({"dirs": [], "removed": [], "skipped": [], "files": []})
        return SimpleNamespace(stdout="", stderr="", exitCode=0, timedOut=False, meta=changes,
                               datas=[], killed=None, error=None, stale=None)


def test_a_fresh_sandbox_gets_the_workspace_while_it_waits(tmp_path):
    """When a sandbox becomes ready (a spare swapped in after a run), the workspace is
    copied into it then: the next command sends only what changed since, not a full copy
    on the run's path."""
    import asyncio

    from harness.config import ShellConfig
    from harness.workspace.sandbox import SandboxView

    work = tmp_path / "work"
    work.mkdir()
    for i in range(50):
        (work / f"f{i}.txt").write_text(str(i))
    ws = Workspace(str(work))
    client = Client()

    async def go() -> None:
        shell = SandboxShell(client, ["cat"], SandboxView(ws, Journal(ScanFeed(str(work)))),
                             ShellConfig())
        client.generation = 1
        client.on_ready(1)  # the page's new sandbox said ready
        await asyncio.sleep(0)
        await shell._preloading
        (work / "late.txt").write_text("written between runs")
        await shell.run("cat late.txt")

    asyncio.run(go())
    (preload, first, first_is_preload), (command, then, was_preload) = client.sent
    assert preload == "" and first["full"] and len(first["files"]) == 50 and first_is_preload
    assert command == "cat late.txt" and not was_preload
    assert not then["full"] and then["files"] == ["/work/late.txt"]
