"""One harness instance as the page sees it, and the one place it is put together.

:class:`Session` is the composition root: from the page's options and the
:class:`~harness.runtime.Runtime` (every capability of where it runs: where events go,
HTTP, the page's tools, the shell's runner, the storage) it builds the model, the
tools, the threads, the agent and the event pipeline, the same way in the worker
(:mod:`harness.runtime.pyodide`), on CPython (``pyharness run``) and in the tests.
Nothing is attached afterwards.

Then the entry point calls it for every page message: :meth:`fs` for ``h.fs``
requests (synchronously), :meth:`threads` for ``h.threads``, :meth:`prompt` and
:meth:`cancel` for runs. Results are JSON text; run events go out through the runtime
as they happen, each recorded in its thread first.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from typing import Any

from . import events as ev
from . import fsops
from .agent import Agent, RunResult
from .compaction import default_window
from .config import HarnessConfig, ModelConfig, parse_config
from .errors import FsError
from .jail import Workspace
from .limits import clean_text, shorten
from .models import build_model
from .models.scripted import ScriptedConfig
from .prompt import system_prompt
from .runtime import Runtime
from .threads import Conversations, ThreadStore
from .tools import builtin_tools
from .tools.base import ToolContext, ToolSet
from .tools.page import PageTool
from .tools.shell import ShellTool


def context_budget(model: ModelConfig) -> int | None:
    """Tokens a request may take: the model's context window less room for the answer.
    None for a scripted model without a ``contextWindow`` (no compaction)."""
    if isinstance(model, ScriptedConfig):
        window = model.context_window
        return None if window is None else window - window // 8
    window = model.context_window or default_window(model.model)
    reserve = getattr(model, "max_tokens", None) or 4096
    return window - min(reserve, window // 4)


class Session:
    def __init__(self, config: HarnessConfig, runtime: Runtime) -> None:
        self.config = config
        self.runtime = runtime
        self.workspace = Workspace(runtime.storage.workspace)
        self.journal = runtime.journal  # every change to the workspace, with its cause
        shell = self._shell_tool(config, runtime)
        self.shell_config = None if shell is None else shell.config  # the shell in use
        tools = ToolSet(t for t in builtin_tools() if t.name in config.builtin_tools)
        if shell is not None:
            tools.add(shell)
        for spec in config.page_tools:  # last: a page tool replaces a built-in of its name
            tools.add(PageTool(spec, runtime.page_tools))
        self.conversations = Conversations(ThreadStore(runtime.storage.threads))
        self.agent = Agent(
            model=build_model(config.model, runtime.transport),
            tools=tools,
            context=ToolContext(self.workspace, self.journal),
            system_prompt=system_prompt(tools.names(), config.system_prompt, self.shell_config,
                                        () if shell is None else shell.runner.commands),
            max_steps=config.max_steps,
            context_budget=context_budget(config.model),
            history=self.conversations.store.current.history,
            on_files=self._announce,
        )
        self._runs: dict[str, asyncio.Task[Any]] = {}
        self._page_calls = 0
        self._file_changes = 0  # file_change events sent (their seq)

    def _shell_tool(self, config: HarnessConfig, runtime: Runtime) -> ShellTool | None:
        """The shell tool over the runtime's runner; None when the shell is off, when a
        page tool of its name replaces it (the runner is then never asked for), or when
        the runtime has no shell (CPython)."""
        shell = config.shell_config
        if shell is None or shell.name in {t.name for t in config.page_tools}:
            return None
        runner = runtime.shell(shell, self.workspace)
        return None if runner is None else ShellTool(shell, runner)

    @classmethod
    def from_options(cls, options_json: str, runtime: Runtime) -> Session:
        """Build a session from the page's options (raises ``UsageError``)."""
        return cls(parse_config(options_json), runtime)

    # -- h.fs ---------------------------------------------------------------

    def fs(self, request_json: str, data: bytes | None = None,
           cause: str | None = None) -> bytes | str:
        """Run one fs request. ``bytes`` for a successful ``readFile``; otherwise JSON:
        ``{"ok": true, "value": ...}`` or ``{"ok": false, "code": ..., "message": ...}``.
        What it changes is in the journal as ``cause`` (the worker's "page:<op>:<id>";
        "page:<n>" by default), and goes to the page as file_change events.

        Never raises: whatever the page sends, it gets exactly one reply (a bug becomes
        ``EIO`` with its name, rather than a request the page waits on forever)."""
        self._page_calls += 1
        cause = cause or f"page:{self._page_calls}"
        try:
            return self._fs(request_json, data, cause)
        finally:
            self.announce(cause)

    def announce(self, cause: str) -> None:
        """Tell the page what one page call changed (file_change events, runId null).
        The worker calls it itself after a call it answered without Python."""
        self._announce(None, cause, None)

    def _announce(self, run_id: str | None, cause: str, tool: str | None) -> None:
        changes = self.journal.changes(cause)
        if not changes:
            return
        call_id = None if run_id is None else cause
        for event in ev.file_changes(changes, run_id, call_id, tool, self._stat,
                                     self._file_changes):
            self.runtime.post(event.model_dump_json(by_alias=True))
            self._file_changes += 1

    def _stat(self, path: str) -> tuple[bool, int] | None:
        try:
            st = os.stat(self.workspace.resolve(path).real, follow_symlinks=False)
        except (FsError, OSError):
            return None
        return stat.S_ISDIR(st.st_mode), st.st_size

    def _fs(self, request_json: str, data: bytes | None, cause: str) -> bytes | str:
        try:
            req = fsops.parse_request(request_json)
            with self.journal.cause(cause):
                value = fsops.dispatch(self.workspace, req, data)
            if isinstance(value, bytes):
                return value
            return json.dumps({"ok": True, "value": value})
        except FsError as exc:
            return _fs_error(exc.code, str(exc))
        except Exception as exc:
            return _fs_error("EIO", f"EIO: internal error in h.fs ({type(exc).__name__}: "
                             f"{shorten(clean_text(str(exc)), 300)})")

    # -- h.threads ----------------------------------------------------------

    def threads(self, request_json: str) -> str:
        """One ``h.threads`` call (JSON in, JSON out; never raises for a bad request).
        The agent then continues the current thread (another after create, switch or
        delete, which are refused while a run is in progress)."""
        reply = self.conversations.request(request_json)
        self.agent.history = self.conversations.store.current.history
        return reply

    # -- runs ---------------------------------------------------------------

    def prompt(self, run_id: str, text: str) -> asyncio.Future[Any]:
        """Start a run in the current thread; its events (ending with ``run_end``) go
        to the page."""
        self.conversations.started(run_id)
        if self._runs:
            return asyncio.ensure_future(self._refuse(run_id, text))
        task = asyncio.ensure_future(self._run(run_id, text))
        self._runs[run_id] = task
        return task

    async def _run(self, run_id: str, text: str) -> RunResult:
        try:
            return await self.agent.run(text, run_id, self._post_event)
        finally:
            # Synchronously after run_end went out: the page may prompt again at once.
            self._runs.pop(run_id, None)

    def cancel(self, run_id: str | None = None) -> bool:
        """Cancel one run (or every run when ``run_id`` is None)."""
        tasks = list(self._runs.values()) if run_id is None else [self._runs.get(run_id)]
        cancelled = False
        for task in tasks:
            if task is not None and not task.done():
                # Not task.cancel() right away: a task cancelled before its first step
                # never runs, so its run would never emit run_end. Queued after that
                # first step, the cancel lands inside the run, which then ends "aborted".
                task.get_loop().call_soon(task.cancel)
                cancelled = True
        return cancelled

    async def _refuse(self, run_id: str, text: str) -> None:
        emit = ev.Emitter(run_id, self._post_event)
        emit(ev.RunStart, prompt=text)
        emit(ev.ErrorEvent, code="busy",
             message="another run is in progress; await its done promise or cancel it first")
        emit(ev.RunEnd, text="", stop_reason="error")

    def _post_event(self, event: Any) -> None:
        """The event pipeline: the wire form, recorded in its run's thread (and the
        thread saved where the durability contract says) before it leaves."""
        message = ev.to_json(event)
        self.conversations.observe(message)
        self.runtime.post(message)


def _fs_error(code: str, message: str) -> str:
    return json.dumps({"ok": False, "code": code, "message": clean_text(message)})
