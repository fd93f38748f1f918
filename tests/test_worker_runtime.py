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
from harness.runtime.sandbox_shell import SandboxReply, SandboxShell
from harness.runtime.scan_feed import ScanFeed
from harness.session import Session
from harness.workspace.jail import Workspace
from harness.workspace.journal import Journal
from harness.workspace.sandbox import Changes, Outgoing


class Host(SimpleNamespace):
    """worker.mjs's ``host``: http, the page-tool calls, and the shell's two members."""

    def __init__(self, commands: list[str]) -> None:
        super().__init__(http=object(), callPageTool=None, cancelPageTool=None,
                         shellCommands=commands, shellPackages=[])
        self.clients: list[object] = []
        self.runs_ended = 0

    def runEnded(self) -> None:  # the JS name
        self.runs_ended += 1

    def sandbox(self) -> object:
        client = SimpleNamespace(watchReady=lambda fn: None)
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


def test_the_end_of_a_run_is_told_to_the_worker(tmp_path):
    """Runtime.run_ended: the worker's host recycles the sandbox that ran the model's
    code (embed/worker/worker.mjs runEnded); on CPython it is nothing."""
    from harness.runtime.native import NativeRuntime

    host = Host(["cat"])
    runtime = Runtime(host, tmp_path)
    runtime.run_ended()
    assert host.runs_ended == 1
    assert NativeRuntime(str(tmp_path / "native")).run_ended() is None


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
    """A :class:`harness.runtime.sandbox_shell.SandboxClient` recording what it is asked
    to send: a stand-in, because the real one needs a sandbox (e2e/test_shell.py drives
    that; tests/js-unit/sandbox-client.test.mjs its JS half)."""

    def __init__(self) -> None:
        self.generation = 0
        self.sent: list[tuple[str, Outgoing, bool]] = []
        self.on_ready: Any = None

    def watch_ready(self, fn: Any) -> None:
        self.on_ready = fn

    async def ready(self) -> int:
        return self.generation

    async def run(self, command: str, limits: dict[str, Any], sync: Outgoing, basis: int,
                  preload: bool = False, ask: Any = None) -> SandboxReply:
        self.sent.append((command, sync, preload))
        return SandboxReply()


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
    assert preload == "" and first.full and len(first.files) == 50 and first_is_preload
    assert command == "cat late.txt" and not was_preload
    assert not then.full and [path for path, _ in then.files] == ["/work/late.txt"]


class JsClient:
    """sandbox-client.mjs's ``run`` as Python sees it through Pyodide (here on CPython:
    the values JsSandbox would have converted stay Python values)."""

    def __init__(self, reply: Any) -> None:
        self.generation = 3
        self.reply = reply
        self.calls: list[tuple[Any, ...]] = []

    def watchReady(self, fn: Any) -> None:  # the JS name
        fn(self.generation)

    async def ready(self) -> Any:
        return self.generation

    async def run(self, *args: Any) -> Any:
        self.calls.append(args)
        return self.reply


class Bytes:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def to_bytes(self) -> bytes:
        return self.data


def test_the_sandbox_adapter_passes_the_sync_once_and_takes_the_changes_as_lists():
    """JsSandbox (harness/runtime/pyodide.py): the sync is one object (the paths and
    sizes) and one packed buffer; the changes come back as arrays, each file's bytes
    copied once; no JSON text either way."""
    import asyncio

    from harness.runtime.pyodide import JsSandbox

    changes = SimpleNamespace(dirs=["/work/d"], removed=["/work/x"], skipped=[],
                              paths=["/work/d/a", "/work/b"], datas=[Bytes(b"A"), Bytes(b"bb")])
    client = JsClient(SimpleNamespace(stdout="out", stderr="", exitCode=0, timedOut=False,
                                      changes=changes))
    sandbox = JsSandbox(client)
    heard: list[int] = []
    sandbox.watch_ready(heard.append)
    sync = Outgoing(full=True, dirs=["/work/d"], files=[("/work/d/a", b"12"), ("/work/b", b"345")],
                    removed=[])

    async def go() -> Any:
        assert await sandbox.ready() == 3
        return await sandbox.run("ls", {"timeoutMs": 10}, sync, 3)

    reply = asyncio.run(go())
    (command, limits, meta, packed, basis, preload, gate), = client.calls
    limits, meta = (v.to_py() if hasattr(v, "to_py") else v for v in (limits, meta))  # Pyodide
    assert (command, limits, basis, preload, gate) == ("ls", {"timeoutMs": 10}, 3, False, None)
    assert meta == {"full": True, "dirs": ["/work/d"], "removed": [],
                    "files": ["/work/d/a", "/work/b"], "sizes": [2, 3]}
    assert packed == b"12345" and heard == [3]
    assert reply == SandboxReply(stdout="out", changes=Changes(
        dirs=["/work/d"], files=[("/work/d/a", b"A"), ("/work/b", b"bb")], removed=["/work/x"]))
    for answer, expected in [(SimpleNamespace(killed="flood"), SandboxReply(killed="flood")),
                             (SimpleNamespace(error="no"), SandboxReply(error="no")),
                             (SimpleNamespace(stale=True), SandboxReply(stale=True))]:
        client.reply = answer
        assert asyncio.run(sandbox.run("ls", {}, sync, 3)) == expected
