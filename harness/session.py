"""One harness instance as the page sees it: the fs bridge and the runs.

The worker bootstrap creates one :class:`Session` per ``createHarness()`` and calls
it for every page message: :meth:`fs` for ``h.fs`` requests (synchronously),
:meth:`prompt` and :meth:`cancel` for runs. Results are JSON text; run events go out
through the runtime as they happen.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from . import events as ev
from . import fsops
from .agent import Agent, RunResult
from .compaction import default_window
from .config import HarnessConfig, ModelConfig, parse_config
from .errors import FsError
from .jail import Workspace
from .limits import clean_text, loads_bounded, shorten
from .models import build_model
from .models.scripted import ScriptedConfig
from .prompt import system_prompt
from .runtime import Runtime, ShellRunner
from .shell import ShellTool, environment_lines
from .tools import builtin_tools
from .tools.base import ToolContext, ToolSet
from .tools.page import PageTool


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
    def __init__(self, config: HarnessConfig, workspace: Workspace, runtime: Runtime) -> None:
        self.config = config
        self.workspace = workspace
        self.runtime = runtime
        tools = ToolSet(t for t in builtin_tools() if t.name in config.builtin_tools)
        page_names = {t.name for t in config.page_tools}
        shell = config.shell_config
        # A page tool of the shell's name replaces the shell: it is then never loaded.
        self.shell_config = shell if shell is not None and shell.name not in page_names else None
        if self.shell_config is not None:
            tools.add(ShellTool(self.shell_config))
        for spec in config.page_tools:  # last: a page tool replaces a built-in of its name
            tools.add(PageTool(spec, runtime.page_tools))
        self.agent = Agent(
            model=build_model(config.model, runtime.transport),
            tools=tools,
            context=ToolContext(workspace),
            system_prompt=self._system_prompt(tools, []),
            max_steps=config.max_steps,
            context_budget=context_budget(config.model),
        )
        self._runs: dict[str, asyncio.Task[Any]] = {}

    def attach_shell(self, runner: ShellRunner) -> None:
        """Give the shell tool its runner (the worker's just-bash), and tell the model
        which commands it has."""
        self.agent.context.shell = runner
        self.agent.system_prompt = self._system_prompt(self.agent.tools, runner.commands)

    def _system_prompt(self, tools: ToolSet, commands: list[str]) -> str:
        lines = environment_lines(self.shell_config, commands)
        return system_prompt(tools.names(), self.config.system_prompt, lines)

    @classmethod
    def create(cls, config_json: str, root: str, runtime: Runtime) -> Session:
        """Build a session from the page's options (raises ``UsageError``)."""
        return cls(parse_config(_clean_options(config_json)), Workspace(root), runtime)

    # -- h.fs ---------------------------------------------------------------

    def fs(self, request_json: str, data: bytes | None = None) -> bytes | str:
        """Run one fs request. ``bytes`` for a successful ``readFile``; otherwise JSON:
        ``{"ok": true, "value": ...}`` or ``{"ok": false, "code": ..., "message": ...}``.

        Never raises: whatever the page sends, it gets exactly one reply (a bug becomes
        ``EIO`` with its name, rather than a request the page waits on forever)."""
        try:
            req = fsops.parse_request(request_json)
            value = fsops.dispatch(self.workspace, req, data)
            if isinstance(value, bytes):
                return value
            return json.dumps({"ok": True, "value": value})
        except FsError as exc:
            return _fs_error(exc.code, str(exc))
        except Exception as exc:
            return _fs_error("EIO", f"EIO: internal error in h.fs ({type(exc).__name__}: "
                             f"{shorten(clean_text(str(exc)), 300)})")

    # -- runs ---------------------------------------------------------------

    def prompt(self, run_id: str, text: str) -> asyncio.Future[Any]:
        """Start a run; its events (ending with ``run_end``) go to the page."""
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
        self.runtime.post(ev.to_json(event))


def _clean_options(config_json: str) -> str:
    """The options with lone surrogates replaced: ``JSON.stringify`` writes one as a
    ``"\\ud800"`` escape, which pydantic's parser refuses outright. Anything this
    cannot read goes on unchanged, for the config parser to explain."""
    try:
        value = loads_bounded(config_json, "the options", len(config_json), _OPTIONS_DEPTH)
    except (ValueError, TypeError):
        return config_json
    return json.dumps(value, ensure_ascii=False)


_OPTIONS_DEPTH = 200  # pydantic's own limit; page tools' JSON Schemas nest


def _fs_error(code: str, message: str) -> str:
    return json.dumps({"ok": False, "code": code, "message": clean_text(message)})
