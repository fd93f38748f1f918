"""One harness instance as the page sees it, and the one place it is put together.

:class:`Session` is the composition root: from the page's options and the
:class:`~harness.runtime.Runtime` (every capability of where it runs: where events go,
HTTP, the page's tools, the shell's runner, the storage) it builds the model, the
tools, the threads, the agent and the event pipeline, the same way in the worker
(:mod:`harness.runtime.pyodide`), on CPython (``pyharness run``) and in the tests.
Nothing is attached afterwards.

Then the entry point calls it for every page message: :meth:`fs` for ``h.fs``
requests (synchronously), :meth:`threads` for ``h.threads``, :meth:`checkpoint` for
``h.revert``, ``h.diff`` and ``h.checkpoints``, :meth:`prompt` and :meth:`cancel` for
runs. Results are JSON text; run events go out through the runtime as they happen,
each recorded in its thread first. Each run is given its
:class:`~harness.agent.RunContext` (the current thread's own history, the system prompt
with the project's instructions as they are now, the thread's reads); the agent itself
is not changed from run to run.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
import os
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from . import call_hooks
from . import events as ev
from .agent import Agent, RunContext, RunResult, ToolHooks
from .attachments import Attached, read_attachments
from .budget import Meter, Scope, Tally, limits_of
from .checkpoint_requests import CheckpointRequests
from .compaction import default_window
from .config import (
    BUILTIN_TOOL_NAMES,
    Budget,
    HarnessConfig,
    ModelConfig,
    SubagentConfig,
    check_budget,
    first_error,
    parse_config,
)
from .errors import FsError, ToolError, UsageError
from .file_changes import FileChanges
from .fs_requests import FsRequests, error_reply
from .images import default_vision
from .models import build_model
from .models.scripted import ScriptedConfig
from .policy.approvals import Approvals
from .policy.enforce import CURRENT_CALL, ShellRules
from .policy.permissions import Rules
from .policy.plan import PLAN_PROMPT, READ_ONLY_BUILTINS, PlanGate, plan_rules, plan_tools
from .preview import PreviewSite, PreviewTool
from .project import Skill, project
from .prompt import system_prompt
from .runtime import CommandGate, Runtime
from .subagents import (
    CURRENT_RUN,
    SUBAGENT_PROMPT,
    RunInfo,
    TaskParams,
    TaskTool,
    bounded_answer,
    cancelled_meanwhile,
    lowered,
    refuse,
)
from .threads import Conversations, RewindRequest, ThreadStore
from .tools import builtin_tools
from .tools.base import SubjectKind, Tool, ToolContext, ToolSet
from .tools.page import PageTool
from .tools.reads import Reads
from .tools.shell import ShellTool
from .tools.skill import SkillTool
from .workspace.checkpoints import Checkpoints
from .workspace.jail import Workspace
from .workspace.journal import Journal


def context_budget(model: ModelConfig) -> int | None:
    """Tokens a request may take: the model's context window less room for the answer.
    None for a scripted model without a ``contextWindow`` (no compaction)."""
    if isinstance(model, ScriptedConfig):
        window = model.context_window
        return None if window is None else window - window // 8
    window = model.context_window or default_window(model.model)
    reserve = getattr(model, "max_tokens", None) or 4096
    return window - min(reserve, window // 4)


def model_vision(model: ModelConfig) -> bool:
    """Whether the model is given images: ``model.vision``, else by its name (a scripted
    model: when its config says so)."""
    if model.vision is not None:
        return model.vision
    return False if isinstance(model, ScriptedConfig) else default_vision(model.model)


class Session:
    def __init__(self, config: HarnessConfig, runtime: Runtime) -> None:
        self.config = config
        self.runtime = runtime
        self.workspace = Workspace(runtime.storage.workspace)
        self.journal = runtime.journal  # every change to the workspace, with its cause
        threads_dir = runtime.storage.threads
        # Every run's checkpoint, kept beside the threads (/state: written through to OPFS).
        self.checkpoints = None if not config.checkpoints else Checkpoints(
            self.journal, self.workspace.root,
            None if threads_dir is None else os.path.join(os.path.dirname(threads_dir),
                                                          "checkpoints"))
        shell = self._shell_tool(config, runtime)
        self.shell_config = None if shell is None else shell.config  # the shell in use
        tools = ToolSet(t for t in builtin_tools() if t.name in config.builtin_tools)
        if shell is not None:
            tools.add(shell)
        if config.skills:
            tools.add(SkillTool(config.skills))
        agents = config.subagents
        self.subagents: SubagentConfig | None = (
            None if agents is False else SubagentConfig() if agents is True else agents)
        if self.subagents is not None:  # harness/subagents.py
            tools.add(TaskTool(self._spawn, self.subagents.max_concurrent))
        self.preview = PreviewSite(self.workspace, None)  # h.preview's (harness/preview.py)
        if config.preview:
            tools.add(PreviewTool(self.preview))
        for spec in config.page_tools:  # last: a page tool replaces a built-in of its name
            tools.add(PageTool(spec, runtime.page_tools))
        self.conversations = Conversations(ThreadStore(runtime.storage.threads),
                                           config.read_before_write)
        # What the page hears of the workspace: file_change events, h.fs replies.
        self.file_changes = FileChanges(self.journal, self.workspace, runtime.post)
        self.file_changes.watchers.append(self.preview.changed)
        self.fs_requests = FsRequests(self.workspace, self.journal, self.file_changes,
                                      self.checkpoints is not None)
        self._runs: dict[str, asyncio.Task[Any]] = {}  # the runs in progress
        # The budget in force (the option, then h.setBudget's), what this harness used
        # since it was created, and the budget notices sent (harness/budget.py).
        self.budget: Budget | None = config.budget
        self.used = Tally()
        self._told: set[tuple[str, Any, float]] = set()
        self.checkpoint_requests = CheckpointRequests(self.checkpoints, self.file_changes,
                                                      lambda: bool(self._runs))
        approvals = _approvals(config, tools, runtime)
        hidden = None
        commands = [] if config.plan is None else config.plan.commands
        if shell is not None:  # the rules as each line runs (and plan mode's, planning)
            line_rules = None
            if approvals is not None:
                shell_rules = ShellRules(approvals, shell.name)
                line_rules = shell_rules.for_line
                if shell_rules.reads_denied:
                    shell.runner.restrict(shell_rules.hidden)
            shell.gates = functools.partial(_shell_gate, line_rules,
                                            plan_rules(shell.name, commands), shell.name)
        if approvals is not None and approvals.rules.has_rule("read"):
            hidden = functools.partial(_read_denied, approvals.rules)
        self.preview.hidden = hidden  # the preview loads only what the model may read
        self.agent = Agent(
            model=build_model(config.model, runtime.transport),
            tools=tools,
            # Reads: each run's, its thread's (the RunContext's).
            context=ToolContext(self.workspace, self.journal, vision=model_vision(config.model),
                                hidden=hidden),
            max_steps=config.max_steps,
            context_budget=context_budget(config.model),
            hooks=_call_hooks(self.journal, config.checkpoints, approvals,
                             self.file_changes.call),
        )
        # The tools, the shell and the page's prompt; each run's adds the project's.
        self.system_prompt = system_prompt(tools.names(), config.system_prompt,
                                           self.shell_config,
                                           () if shell is None else shell.runner.commands,
                                           () if shell is None else shell.runner.packages)
        # A plan run's: the read-only tools (harness/policy/plan.py), told it plans.
        self.plan_tools = plan_tools(tools, functools.partial(_read_only, bool(commands)))
        planning_shell = shell is not None and shell.name in self.plan_tools.names()
        self.plan_prompt = system_prompt(
            self.plan_tools.names(), config.system_prompt,
            self.shell_config if planning_shell else None,
            shell.runner.commands if planning_shell and shell else (),
            shell.runner.packages if planning_shell and shell else ()) + "\n\n" + PLAN_PROMPT
        self._reported: set[str] = set()  # the project's problems already told
        self._page_skills = [Skill(s.name, s.description, None) for s in config.skills]
        for i, path in enumerate(config.instruction_files):
            try:
                self.workspace.resolve(path)
            except FsError as exc:
                raise UsageError(f"invalid option 'instructionFiles.{i}': {exc}") from None

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
           cause: str | None = None, of_call: bool = False) -> bytes | str:
        """Run one fs request (harness/fs_requests.py): ``bytes`` for a successful
        ``readFile``, otherwise JSON. Never raises."""
        return self.fs_requests.answer(request_json, data, cause, of_call)

    def announce(self, cause: str) -> None:
        """Tell the page what one page call changed (file_change events, runId null).
        The worker calls it itself after a call it answered without Python."""
        self.file_changes.page(cause)

    # -- h.threads ----------------------------------------------------------

    def threads(self, request_json: str) -> str:
        """One ``h.threads`` call (JSON in, JSON out; never raises for a bad request).
        The next run continues the current thread (another after create, switch or
        delete, which are refused while a run is in progress; and rewind)."""
        return self.conversations.request(request_json, self._rewind)

    def _rewind(self, request: RewindRequest) -> str:
        """``h.threads.rewind(runId)`` (harness/threads.py): that run and every later one
        of the current thread are reverted (files) and cut from it. All or nothing."""
        try:
            if self._runs:
                raise FsError("EBUSY", "a run is in progress; rewind when it has ended")
            value = self.conversations.rewind(request.run_id,
                                             self.checkpoint_requests.revert_runs)
            return json.dumps({"ok": True, "value": value})
        except FsError as exc:
            return error_reply(exc.code, str(exc))

    # -- h.revert, h.diff, h.checkpoints ------------------------------------

    def checkpoint(self, request_json: str) -> str:
        """One ``h.revert`` / ``h.diff`` / ``h.checkpoints`` request
        (harness/checkpoint_requests.py): JSON ``{ok, value}`` or ``{ok: false, code,
        message}``; never raises."""
        return self.checkpoint_requests.answer(request_json)

    # -- runs ---------------------------------------------------------------

    def prompt(self, run_id: str, text: str, attachments_json: str = "[]",
               options_json: str = "{}") -> asyncio.Future[Any]:
        """Start a run in the current thread; its events (ending with ``run_end``) go
        to the page. ``attachments_json``: the files the page attached, written to
        /work/attachments/ ([{path, type, size}], harness/attachments.py);
        ``options_json``: ``{mode?: "plan", plan?: text}`` (h.prompt's)."""
        self.conversations.started(run_id)
        if self._runs:
            return asyncio.ensure_future(self._refuse(run_id, text))
        try:
            mode, plan = _prompt_options(options_json)
        except UsageError as exc:
            return asyncio.ensure_future(self._refuse(run_id, text, "invalid_prompt", str(exc)))
        attached = read_attachments(self.workspace, attachments_json)
        prompt, notices = self._read_project(mode)
        task = asyncio.ensure_future(self._run(run_id, text, prompt, attached, notices,
                                               mode, plan))
        self._runs[run_id] = task
        return task

    def _read_project(self, mode: str = "run") -> tuple[str, list[str]]:
        """AGENTS.md and the skills, read again for this run (an edit applies now): the
        run's system prompt, and the problems not told before, for a notice event."""
        found = project(self.workspace, self.config.instructions, self.config.instruction_files,
                        self._page_skills)
        new = [message for key, message in found.problems if key not in self._reported]
        self._reported.update(key for key, _ in found.problems)
        head = self.plan_prompt if mode == "plan" else self.system_prompt
        return f"{head}\n{found.section}", new

    async def _run(self, run_id: str, text: str, system_prompt: str, attached: Attached,
                   notices: list[str], mode: str = "run", plan: str | None = None) -> RunResult:
        thread = self.conversations.mark(run_id)
        planning = mode == "plan"
        meter = self._meter(run_id, thread.id, thread.usage)
        # The thread's own list: what the run adds (and a compaction's rewrite) is saved.
        context = RunContext(run_id, thread.history, system_prompt,
                             self.conversations.reads(thread),
                             tools=self.plan_tools if planning else None,
                             plan=plan, mode="plan" if planning else "run",
                             meter=meter)
        if self.checkpoints is not None:
            self.checkpoints.begin(run_id)
        PLANNING.set(planning)  # this run's task's own context: its tool calls see it
        CURRENT_RUN.set(RunInfo(run_id, 0, meter, system_prompt, asyncio.Semaphore(
            4 if self.subagents is None else self.subagents.max_concurrent)))
        try:
            return await self.agent.run(text, context, self._post_event, attached, notices)
        finally:
            # Synchronously after run_end went out: the page may prompt again at once.
            self._runs.pop(run_id, None)
            try:
                if self.checkpoints is not None:
                    self.checkpoints.end(run_id)
            finally:
                self.runtime.run_ended()  # once, however it ended: no sandbox outlives it

    async def _spawn(self, params: TaskParams) -> str:
        """One ``task`` call: a subagent's run inside the running call (harness/subagents.py);
        its final answer, or a ``ToolError`` when it stopped before it finished."""
        config = self.subagents
        parent, call = CURRENT_RUN.get(), CURRENT_CALL.get()
        if config is None or parent is None or call is None:
            raise refuse("no run is in progress to delegate from")
        depth = parent.depth + 1
        if depth > config.max_depth:
            raise refuse(f"subagents nest at most {config.max_depth} deep")
        tools = self._subagent_tools(params, depth, config)
        run_id = f"{parent.run_id}/{call.call_id}"
        own = lowered(config.budget, params.budget)
        if own is not None:
            try:
                check_budget(Budget(run=own), self.config.model)
            except UsageError as exc:  # the model's budget with a cost and no prices
                raise refuse(str(exc)) from None
        meter = Meter([Scope("run", Tally(), lambda: own, f"run:{run_id}"),
                       *parent.meter.scopes], self.config.model.prices, self._told,
                      parent=parent.meter)
        context = RunContext(run_id, [], f"{parent.system_prompt}\n\n{SUBAGENT_PROMPT}",
                             Reads() if self.config.read_before_write else None,
                             tools=tools, meter=meter, parent=(parent.run_id, call.call_id, depth))
        async with parent.slots:
            token = CURRENT_RUN.set(RunInfo(run_id, depth, meter, parent.system_prompt,
                                            asyncio.Semaphore(config.max_concurrent)))
            if self.checkpoints is not None:  # its own, within the parent run's
                self.checkpoints.begin_sub(run_id)
            try:
                result = await self.agent.run(params.prompt, context, self._post_event)
            finally:
                CURRENT_RUN.reset(token)
                if self.checkpoints is not None:
                    self.checkpoints.end_sub(run_id)
        if result.stop_reason == "aborted" and cancelled_meanwhile():
            raise asyncio.CancelledError  # the parent was cancelled: so is its call
        answer = bounded_answer(result.text, config.max_answer_chars)
        if result.stop_reason == "stop":
            return answer or "(the subagent gave no answer)"
        why = result.budget.message if result.budget is not None else result.stop_reason
        raise ToolError(f"The subagent stopped before it finished ({why}). What it said "
                        f"last:\n{answer or '(nothing)'}")

    def _subagent_tools(self, params: TaskParams, depth: int,
                        config: SubagentConfig) -> ToolSet:
        """A subagent's tools: the parent's (or those it names, or the read-only ones),
        without ``task`` at the last level of nesting."""
        offered = self.plan_tools if params.read_only else self.agent.tools
        names = [n for n in offered.names() if n != TaskTool.name or depth < config.max_depth]
        if params.tools is not None:
            unknown = [n for n in params.tools if n not in names]
            if unknown:
                raise refuse(f"no such tool for a subagent here: {unknown[:5]}; choose from "
                             f"{names}")
            names = [n for n in names if n in params.tools]
        return ToolSet(t for t in offered if t.name in names)

    def _meter(self, run_id: str, thread_id: str, thread_used: Tally) -> Meter:
        """The run's meter: its own usage, its thread's, this harness's, each against
        the budget's limits as they are when checked (h.setBudget applies at once)."""
        budget = functools.partial(getattr, self, "budget")
        return Meter([Scope("run", Tally(), limits_of(budget, "run"), f"run:{run_id}"),
                      Scope("thread", thread_used, limits_of(budget, "thread"),
                            f"thread:{thread_id}"),
                      Scope("harness", self.used, limits_of(budget, "harness"), "harness")],
                     self.config.model.prices, self._told)

    # -- h.usage, h.setBudget -------------------------------------------------

    def usage(self, request_json: str) -> str:
        """``{op: "usage"}`` → what this harness and the current thread used;
        ``{op: "setBudget", budget}`` → the budget in force from now on (null: none).
        JSON ``{ok, value}`` or ``{ok: false, code, message}``; never raises."""
        try:
            request = json.loads(request_json)
            op = request.get("op") if isinstance(request, dict) else None
            if op == "setBudget":
                budget = (None if request.get("budget") is None
                          else Budget.model_validate(request["budget"]))
                check_budget(budget, self.config.model)
                self.budget = budget
            elif op != "usage":
                raise UsageError(f"unknown usage op {str(op)[:40]!r}; use usage or setBudget")
        except ValidationError as exc:
            where, why = first_error(exc)
            return error_reply("EINVAL", f"invalid budget{'.' + where if where else ''}: {why}")
        except (UsageError, ValueError) as exc:
            return error_reply("EINVAL", str(exc))
        thread = self.conversations.store.current
        value = {"harness": self.used.dump(), "thread": thread.usage.dump(),
                 "threadId": thread.id,
                 "budget": None if self.budget is None else self.budget.model_dump(
                     mode="json", by_alias=True, exclude_none=True)}
        return json.dumps({"ok": True, "value": value})

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

    async def _refuse(self, run_id: str, text: str, code: str = "busy",
                      message: str = "another run is in progress; await its done promise "
                      "or cancel it first") -> None:
        emit = ev.Emitter(run_id, self._post_event)
        emit(ev.RunStart, prompt=text)
        emit(ev.ErrorEvent, code=code, message=message)
        emit(ev.RunEnd, text="", stop_reason="error")

    def _post_event(self, event: Any) -> None:
        """The event pipeline: the wire form, recorded in its run's thread (and the
        thread saved where the durability contract says) before it leaves."""
        message = ev.to_json(event)
        self.conversations.observe(message)
        self.runtime.post(message)


def _approvals(config: HarnessConfig, tools: ToolSet, runtime: Runtime) -> Approvals | None:
    """The permission rules over these tools (a ``UsageError`` names a bad one), or None
    when the page gave none. A rule may name a built-in tool that is turned off, or the
    shell where the runtime has none."""
    if config.permissions is None:
        return None
    kinds: dict[str, SubjectKind] = {name: "path" for name in BUILTIN_TOOL_NAMES}
    shell = config.shell_config
    if shell is not None:
        kinds[shell.name] = "command"
    kinds.update({tool.name: tool.subject_kind for tool in tools})
    return Approvals(Rules.parse(config.permissions, kinds), runtime.approvals,
                     config.approval_timeout_ms)


def _call_hooks(journal: Journal | None, capture: bool, approvals: Approvals | None,
                announce: Callable[[str, str, str, str], None]) -> list[ToolHooks]:
    """What wraps every tool call, in order: the journal's cause (with pre-images when
    checkpoints are on), the permission rules, then the file_change announcements."""
    hooks = [] if journal is None else [call_hooks.journal_cause(journal, capture)]
    if approvals is not None:
        hooks.append(call_hooks.approvals_gate(approvals))
    hooks.append(call_hooks.announce_files(announce))
    return hooks


PLANNING: contextvars.ContextVar[bool] = contextvars.ContextVar("pyharness_planning",
                                                               default=False)
"""Whether the run of the current task is a plan run (set in its own task's context)."""


def _shell_gate(line_rules: Callable[[str], CommandGate] | None, planned: Rules, tool: str,
                line: str) -> CommandGate | None:
    """The gate of one shell line: the page's rules, and plan mode's in front of them
    while planning (harness/policy/plan.py)."""
    gate = None if line_rules is None else line_rules(line)
    return PlanGate(planned, tool, gate) if PLANNING.get() else gate


def _read_only(shell_commands: bool, tool: Tool) -> bool:
    """Whether a plan run is offered ``tool``: it changes nothing, or its effects are
    checked (the shell, when the page named read-only commands)."""
    if isinstance(tool, PageTool):
        return tool.read_only
    if isinstance(tool, ShellTool):
        return shell_commands
    return isinstance(tool, SkillTool) or tool.name in READ_ONLY_BUILTINS


def _prompt_options(options_json: str) -> tuple[str, str | None]:
    """h.prompt's ``{mode?, plan?}`` (raises :class:`UsageError`)."""
    try:
        options = json.loads(options_json or "{}")
    except ValueError:
        raise UsageError("the prompt's options are not JSON") from None
    if not isinstance(options, dict) or set(options) - {"mode", "plan"}:
        raise UsageError("the prompt's options are {mode?: \"plan\", plan?: string}")
    mode = options.get("mode") or "run"
    plan = options.get("plan")
    if mode not in ("run", "plan"):
        raise UsageError(f"mode must be \"plan\" (or left out), not {str(mode)[:40]!r}")
    if plan is not None and not isinstance(plan, str):
        raise UsageError("plan must be a string: the plan to carry out")
    return mode, plan


def _read_denied(rules: Rules, rel: str) -> bool:
    """Whether the ``read`` rule denies the workspace-relative path ``rel``."""
    return rules.denies("read", rel)
