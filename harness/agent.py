"""The agent loop: stream the model, run its tool calls, feed results back, repeat.

The loop gets everything it uses (model, tools, workspace, event sink) as arguments,
and each run its :class:`RunContext`: the conversation it continues and grows, and the
system prompt of its requests. The agent keeps nothing from one run to the next. A run
always ends with exactly one ``run_end`` event, whatever happens: a final answer, the
step limit, cancellation (``asyncio.CancelledError``) or a failure (an ``error`` event
first).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from . import events as ev
from .attachments import Attached
from .budget import Meter, unmetered
from .compaction import (
    CHARS_PER_TOKEN,
    compact,
    fixed_chars,
    is_context_error,
    message_chars,
)
from .errors import ToolError
from .events import BudgetLimit, Emitter, StopReason, Totals, Usage
from .images import bound_images
from .limits import MAX_PROMPT_CHARS, MAX_TOOL_ARGUMENTS_CHARS, clean_text
from .messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage
from .models.base import (
    Done,
    Failed,
    Model,
    ModelEvent,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
)
from .policy.enforce import CURRENT_CALL, CallScope
from .tools.base import Gate, Tool, ToolContext, ToolOutcome, ToolSet, parse_arguments
from .tools.reads import Reads

DEFAULT_MAX_STEPS = 50
PLAN_HEADING = "## The plan to carry out (approved by the user)"
INTERRUPTED = "Interrupted: the run was cancelled before this tool call finished."


@dataclass(frozen=True)
class RunResult:
    text: str
    stop_reason: StopReason
    usage: Totals | None = None
    budget: BudgetLimit | None = None
    """With stop reason "budget": the limit."""


@dataclass
class RunContext:
    """What one run is given (pi-mono's per-run context): its id, the conversation it
    continues, the system prompt of its requests, and what its model has read of the
    files (read before overwrite; None: unchecked, or the tool context's own).

    The caller owns ``history`` (in the session, a thread's: harness/threads.py). The run
    grows it in place: the prompt, every answer and tool result; and when the next
    request would not fit, compaction rewrites it in place (harness/compaction.py). So
    after the run it holds the conversation as the next run continues it; whoever keeps
    the list (the thread's journal) sees every change as it happens."""

    run_id: str
    history: list[Message] = field(default_factory=list)
    system_prompt: str = ""
    reads: Reads | None = None
    tools: ToolSet | None = None
    """The tools of this run (a plan run's read-only ones); None: the agent's."""
    plan: str | None = None
    """An approved plan this run carries out: given to the model with the prompt."""
    mode: Literal["run", "plan"] = "run"
    """"plan": the run's final answer is its plan (a ``plan`` event before ``run_end``)."""
    parent: tuple[str, str, int] | None = None
    """A subagent's run (harness/subagents.py): its parent run, the ``task`` call, depth."""
    meter: Meter | None = None
    """What counts the run's usage against its budgets (harness/budget.py); None: one
    that only counts."""


@dataclass(frozen=True)
class CallInfo:
    """The tool call a hook is about: its run's emitter (``emit.run_id``), the call, its
    arguments as parsed (the raw text when they do not parse) and the tools' context."""

    emit: Emitter
    call: ToolCall
    arguments: str | dict[str, Any]
    context: ToolContext


@dataclass(frozen=True)
class ToolHooks:
    """What wraps every tool call; each part optional. Several compose in the order given
    to the :class:`Agent`. Contract: a hook that raises makes the call's result an error
    (``Hook failed: ...``) and never ends the run.

    - ``around``: a context manager held while the call runs (entered in order, exited
      in reverse); one that fails to enter means the call is not run.
    - ``gate``: given the call, a :data:`~harness.tools.base.Gate` (or None) that sees
      the validated parameters before the tool runs; the first refusal is the result.
    - ``after``: told when the call is over, with its outcome (None when the run was
      cancelled inside the call); runs in a ``finally``, so it must be quick and sync.
    - ``resume``: told each time a call run at once with others (``task``) goes on after
      another ran, in that call's task: a hook whose state lives outside the task (the
      journal's cause, told to the filesystem's feed) puts it back. Quick and sync.
    """

    around: Callable[[CallInfo], contextlib.AbstractContextManager[object]] | None = None
    gate: Callable[[CallInfo], Gate | None] | None = None
    after: Callable[[CallInfo, ToolOutcome | None], None] | None = None
    resume: Callable[[], None] | None = None


def _hook_failed(part: str, exc: Exception, ran: bool = True) -> ToolOutcome:
    then = ("it may have run: check its effect before retrying" if ran
            else "the call was not run")
    return ToolOutcome(f"Hook failed ({part}): {type(exc).__name__}: {exc}; {then}.",
                       is_error=True)


@dataclass
class _Turn:
    """What one model request produced so far (kept even if the turn is cut short)."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    failure: Failed | None = None
    oversize: dict[str, int] = field(default_factory=dict)
    """Calls whose arguments were over the size limit (their length), by call id."""


class Agent:
    def __init__(
        self,
        model: Model,
        tools: ToolSet,
        context: ToolContext,
        max_steps: int = DEFAULT_MAX_STEPS,
        context_budget: int | None = None,
        hooks: Sequence[ToolHooks] = (),
    ) -> None:
        self.model = model
        # What wraps every tool call, in order (the journal's cause, the approvals gate,
        # the file_change announcements: harness/call_hooks.py, chosen by the Session).
        self.hooks = tuple(hooks)
        self.tools = tools
        self.context = context  # the tools' (a run's read tracking replaces its reads)
        self.max_steps = max_steps
        # Estimated tokens a request may take (the context window less room for the
        # answer); None: no compaction unless the provider says the context is too long.
        self.context_budget = context_budget

    async def run(self, prompt: str, context: RunContext, sink: Callable[[ev.Event], None],
                  attached: Attached | None = None, notices: list[str] | None = None) -> RunResult:
        """One run of ``prompt`` (and the files attached to it: named for the model, its
        images shown) in ``context``, whose history it grows."""
        attached = attached or Attached()
        emit = Emitter(context.run_id, sink, context.parent)
        tools = (self.context if context.reads is None
                 else dataclasses.replace(self.context, reads=context.reads))
        state = _RunState(context, tools, context.meter or unmetered(context.run_id),
                          context.tools or self.tools)
        try:
            prompt = clean_text(prompt)
            plan = None if context.plan is None else clean_text(context.plan)
            emit(ev.RunStart, prompt=prompt, attachments=attached.refs,
                 mode="plan" if context.mode == "plan" else None, plan=plan)
            for notice in notices or []:  # told once: a skill skipped for its front matter
                emit(ev.Notice, code="skill_skipped", message=notice)
            if len(prompt) + len(plan or "") > MAX_PROMPT_CHARS:
                emit(ev.ErrorEvent, code="prompt_too_large",
                     message=f"the prompt (and its plan) is {len(prompt) + len(plan or ''):,} "
                     f"characters; the limit is "
                     f"{MAX_PROMPT_CHARS:,}. Send a shorter prompt, or write the text to a "
                     "file with h.fs and refer to it.")
                result = RunResult("", "error")
            else:
                text = prompt + attached.note
                if plan is not None:
                    text += f"\n\n{PLAN_HEADING}\n\n{plan}"
                state.history.append(UserMessage(text=text, images=list(attached.images)))
                if attached.images:
                    bound_images(state.history)
                result = await self._timed(emit, state)
        except asyncio.CancelledError:
            self._close_interrupted(state)
            result = RunResult(state.last_text, "aborted")
        except Exception as exc:  # a bug must not kill the worker: report it, end the run
            self._close_interrupted(state)
            with contextlib.suppress(Exception):
                emit(ev.ErrorEvent, code="internal", message=f"{type(exc).__name__}: {exc}")
            result = RunResult(state.last_text, "error")
        result = dataclasses.replace(result, usage=state.meter.finish())
        if context.mode == "plan" and result.stop_reason == "stop":
            with contextlib.suppress(Exception):  # run_end must still go out
                emit(ev.Plan, text=result.text)
        _end(emit, result)
        return result

    async def _timed(self, emit: Emitter, state: _RunState) -> RunResult:
        """The loop, within the budgets' wall time: when it runs out, what is in flight
        is cancelled (as by ``h.cancel``) and the run stops with stop reason "budget".
        The deadline follows the limits as they change (h.setBudget), at every check."""
        deadline = asyncio.timeout(None)  # set at the first check (_check_request)
        try:
            async with deadline:
                state.deadline = deadline
                return await self._loop(emit, state)
        except TimeoutError:
            if not deadline.expired():
                raise
            self._close_interrupted(state)
            return RunResult(state.last_text, "budget", budget=state.meter.time_limit())

    async def _loop(self, emit: Emitter, state: _RunState) -> RunResult:
        for number in range(1, self.max_steps + 1):
            await self._fit(emit, state, "window")
            if (stop := self._check_request(state)) is not None:
                return RunResult(state.last_text, "budget", budget=stop)
            emit(ev.TurnStart, turn=number)
            state.turn = _Turn()
            await self._stream(emit, state, state.turn)
            failure = state.turn.failure
            if (failure is not None and not state.turn.text and not state.turn.calls
                    and is_context_error(failure.message)
                    and await self._fit(emit, state, "provider")
                    and self._check_request(state) is None):
                state.turn = _Turn()  # one retry, on the compacted history
                await self._stream(emit, state, state.turn)
            turn, state.turn = state.turn, None
            state.last_text = turn.text
            if turn.failure is not None:
                if turn.text:
                    state.history.append(AssistantMessage(text=turn.text))
                emit(ev.TurnEnd, turn=number, stop_reason="error", usage=turn.usage)
                emit(ev.ErrorEvent, code=turn.failure.code, message=turn.failure.message)
                return RunResult(turn.text, "error")
            state.pending = AssistantMessage(text=turn.text, tool_calls=turn.calls)
            state.history.append(state.pending)
            if not turn.calls:
                state.pending = None
                emit(ev.TurnEnd, turn=number, stop_reason="stop", usage=turn.usage)
                return RunResult(turn.text, "stop")
            await self._call_tools(emit, state, turn)
            state.pending = None
            emit(ev.TurnEnd, turn=number, stop_reason="tool_calls", usage=turn.usage)
            if state.stopped is not None:
                return RunResult(state.last_text, "budget", budget=state.stopped)
        return RunResult(state.last_text, "max_steps")

    def _reschedule(self, state: _RunState) -> None:
        if state.deadline is not None:
            left = state.meter.seconds_left()
            state.deadline.reschedule(
                None if left is None else asyncio.get_running_loop().time() + left)

    def _check_request(self, state: _RunState) -> BudgetLimit | None:
        """Whether the budgets let the next model request go out (None: yes, and with
        how many output tokens at most, kept for the request)."""
        self._reschedule(state)
        verdict = state.meter.check_request(state.size)
        if isinstance(verdict, BudgetLimit):
            return verdict
        state.max_output = verdict
        return None

    def _notify(self, emit: Emitter, state: _RunState) -> None:
        """Tell the page of every budget limit newly 80 % used."""
        for limit in state.meter.notices():
            emit(ev.Notice, code="budget", message=limit.message, budget=limit)

    async def _fit(self, emit: Emitter, state: _RunState,
                   reason: Literal["window", "provider"]) -> bool:
        """Compact the run's history (in place) if the next request would not fit
        (``window``) or the provider refused it as too long (``provider``); emit what
        was done."""
        if self.context_budget is None and reason == "window":
            return False
        prompt, history = state.context.system_prompt, state.history
        size = state.size()  # estimate() of the request, counting only what was added
        done = await compact(history, prompt, state.toolset.specs(),
                             _Metered(self.model, state.meter), self.context_budget or size,
                             force=reason == "provider", before=size)
        self._notify(emit, state)
        if done is None:
            return False
        emit(ev.Compaction, reason=reason, before_tokens=done.before_tokens,
             after_tokens=done.after_tokens, shortened_outputs=done.shortened_outputs,
             summarized_messages=done.summarized_messages)
        return True

    async def _stream(self, emit: Emitter, state: _RunState, turn: _Turn) -> None:
        request = ModelRequest(state.context.system_prompt, list(state.history),
                               state.toolset.specs(), max_output_tokens=state.max_output)
        async for part in _Metered(self.model, state.meter, turn).stream(request):
            match part:
                # Model text enters the history here: a lone surrogate kept in it would
                # make every later request fail to encode, so it is replaced now.
                case TextPart(delta=delta):
                    delta = clean_text(delta)
                    turn.text += delta
                    emit(ev.TextDelta, delta=delta)
                case ReasoningPart(delta=delta):
                    emit(ev.ReasoningDelta, delta=delta)
                case ToolCallPart(id=call_id, name=name, arguments=arguments):
                    call = ToolCall(id=clean_text(call_id), name=clean_text(name),
                                    arguments=clean_text(arguments))
                    if len(arguments) > MAX_TOOL_ARGUMENTS_CHARS:
                        # Not kept: sent back with every later request, it could make
                        # each of them fail. The tool result says what happened.
                        turn.oversize[call.id] = len(arguments)
                        call = call.model_copy(update={"arguments": "{}"})
                    turn.calls.append(call)
                case Failed():
                    turn.failure = part
        self._notify(emit, state)

    async def _call_tools(self, emit: Emitter, state: _RunState, turn: _Turn) -> None:
        """The turn's calls in order; a run of consecutive calls of a tool that may run
        concurrently (``task``: subagents) runs at once, each in its own task, their
        results kept in the calls' order."""
        calls = turn.calls
        i = 0
        while i < len(calls):
            j = i + 1
            if _concurrent(state.toolset, calls[i]):
                while j < len(calls) and _concurrent(state.toolset, calls[j]):
                    j += 1
            group = [self._run_call(emit, state, call, turn.oversize.get(call.id, 0))
                     for call in calls[i:j]]
            outcomes = [await group[0]] if len(group) == 1 else await _at_once(
                group, [h.resume for h in self.hooks if h.resume is not None])
            for call, outcome in zip(calls[i:j], outcomes, strict=True):
                self._record_call(emit, state, call, outcome)
            i = j

    async def _run_call(self, emit: Emitter, state: _RunState, call: ToolCall,
                        oversize: int) -> ToolOutcome:
        # Parsed once, for the event and the tool; text that does not parse goes to the
        # tool as it is, whose error result says why.
        arguments: str | dict[str, Any] = call.arguments
        with contextlib.suppress(ToolError):
            arguments = parse_arguments(call.arguments)
        emit(ev.ToolStart, call_id=call.id, name=call.name,
             arguments=arguments if isinstance(arguments, dict) else {})
        self._reschedule(state)
        limit = state.meter.check_tool_call() if state.stopped is None else state.stopped
        if limit is not None:
            state.stopped = limit
            outcome = ToolOutcome(f"Not run: {limit.message}. The run stops here.",
                                  is_error=True)
        elif oversize:
            state.meter.record_tool_call()
            outcome = ToolOutcome(
                f"The tool arguments are {oversize:,} characters; the limit is "
                f"{MAX_TOOL_ARGUMENTS_CHARS:,}. The call was not run: split the work into "
                "smaller calls (for example several edits instead of one large write).",
                is_error=True)
        elif state.context.mode == "plan" and call.name not in state.toolset.names() \
                and call.name in self.tools.names():
            outcome = ToolOutcome(  # a plan run's: the tool exists, and is not offered
                f"Not run: '{call.name}' can change files, and this is a plan run: nothing "
                "may change until the user approves the plan. Put this step in the plan.",
                is_error=True)
        else:
            state.meter.record_tool_call()
            outcome = await self._run_hooked(CallInfo(emit, call, arguments, state.tools),
                                             state.toolset)
        return outcome

    def _record_call(self, emit: Emitter, state: _RunState, call: ToolCall,
                     outcome: ToolOutcome) -> None:
        """A call's result into the history, and its ``tool_end``."""
        output = clean_text(outcome.output)
        state.history.append(ToolResult(call_id=call.id, name=call.name, output=output,
                                        is_error=outcome.is_error, images=list(outcome.images)))
        if outcome.images:
            bound_images(state.history)
        emit(ev.ToolEnd, call_id=call.id, name=call.name,
             output=output, is_error=outcome.is_error)
        self._notify(emit, state)

    async def _run_hooked(self, info: CallInfo, toolset: ToolSet) -> ToolOutcome:
        """Run one call inside its hooks: each ``around`` entered in order, the gates
        asked in order, each ``after`` told in order (also when cancelled, with no
        outcome). A hook that raises becomes the call's error result, never a crashed
        run; the call's scope (CURRENT_CALL) is set throughout, for asks as it runs."""
        outcome: ToolOutcome | None = None
        scope = CURRENT_CALL.set(CallScope(info.emit, info.call.id))
        try:
            with contextlib.ExitStack() as stack:
                try:
                    for hook in self.hooks:
                        if hook.around is not None:
                            stack.enter_context(hook.around(info))
                except Exception as exc:
                    outcome = _hook_failed("around", exc, ran=False)
                if outcome is None:
                    outcome = await toolset.execute(info.call.name, info.arguments,
                                                       info.context, self._gate(info))
        except Exception as exc:  # an around hook's exit; the tool's own errors are results
            outcome = _hook_failed("around", exc)
        finally:
            CURRENT_CALL.reset(scope)
            for hook in self.hooks:  # also when cancelled: what it changed is changed
                if hook.after is not None:
                    try:
                        hook.after(info, outcome)
                    except Exception as exc:
                        if outcome is not None:
                            outcome = _hook_failed("after", exc)
        assert outcome is not None  # else the call was cancelled, and this is not reached
        return outcome

    def _gate(self, info: CallInfo) -> Gate | None:
        gates = [g for g in (h.gate(info) for h in self.hooks if h.gate is not None)
                 if g is not None]
        if not gates:
            return None

        async def gate(tool: Tool, params: Any) -> str | None:
            for one in gates:  # the first refusal is the result
                try:
                    refusal = await one(tool, params)
                except Exception as exc:
                    return _hook_failed("gate", exc, ran=False).output
                if refusal is not None:
                    return refusal
            return None

        return gate

    def _close_interrupted(self, state: _RunState) -> None:
        """Keep the history valid for a provider after a run was cut short: partial
        text is kept, and every tool call without a result gets an "interrupted" one."""
        history = state.history
        if state.turn is not None and state.turn.text:
            state.last_text = state.turn.text
            history.append(AssistantMessage(text=state.turn.text))
        if state.pending is not None:
            since = history[history.index(state.pending) + 1 :]
            answered = {m.call_id for m in since if isinstance(m, ToolResult)}
            for call in state.pending.tool_calls:
                if call.id not in answered:
                    history.append(ToolResult(call_id=call.id, name=call.name,
                                              output=INTERRUPTED, is_error=True))


async def _at_once(calls: list[Coroutine[Any, Any, ToolOutcome]],
                   resumes: list[Callable[[], None]]) -> list[ToolOutcome]:
    """Run calls each in its own task, ``resumes`` told each time one goes on; if one
    fails or the run is cancelled, the others are cancelled and awaited before the error
    goes on."""
    started = [asyncio.ensure_future(_Resuming(call, resumes)) for call in calls]
    try:
        return list(await asyncio.gather(*started))
    except BaseException:
        for task in started:
            task.cancel()
        await asyncio.gather(*started, return_exceptions=True)
        raise
    finally:
        for resume in resumes:  # this task goes on after theirs
            resume()


class _Resuming(Coroutine[Any, Any, Any]):
    """A coroutine that tells ``resumes`` each time its task runs it further (in the
    task's own context): asyncio has no other word for a switch between tasks."""

    def __init__(self, inner: Coroutine[Any, Any, Any], resumes: list[Callable[[], None]]):
        self._inner = inner
        self._resumes = resumes

    def _resumed(self) -> None:
        for resume in self._resumes:
            resume()

    def send(self, value: Any) -> Any:
        self._resumed()
        return self._inner.send(value)

    def throw(self, *exc: Any) -> Any:
        self._resumed()
        return self._inner.throw(*exc)

    def close(self) -> None:
        self._inner.close()

    def __await__(self) -> Any:
        return self._inner.__await__()


def _concurrent(toolset: ToolSet, call: ToolCall) -> bool:
    tool = toolset.get(call.name)
    return tool is not None and getattr(tool, "concurrent", False)


def _end(emit: Emitter, result: RunResult) -> None:
    """Emit ``run_end``: the page's ``run.done`` waits for it, so it must go out. Its
    fields are made safe by the emitter; should the sink still fail, a bare ``run_end``
    (no text that could be at fault) is tried before giving up."""
    try:
        emit(ev.RunEnd, text=result.text, stop_reason=result.stop_reason, usage=result.usage,
             budget=result.budget)
    except Exception:
        with contextlib.suppress(Exception):
            emit(ev.RunEnd, text="", stop_reason="error")


@dataclass
class _RunState:
    context: RunContext
    tools: ToolContext  # the tools' context for this run
    meter: Meter  # the run's usage, against its budgets
    toolset: ToolSet  # the run's tools
    turn: _Turn | None = None
    pending: AssistantMessage | None = None
    last_text: str = ""
    max_output: int | None = None  # what the budgets leave the next request to answer
    stopped: BudgetLimit | None = None  # a tool call refused by a budget: the run stops
    deadline: asyncio.Timeout | None = None  # the budgets' wall time (None: before it is set)
    # the next request's estimated size, as the history grows (size())
    _fixed: int | None = None
    _counted: int = 0
    _chars: int = 0
    _rewrites: int | None = None

    @property
    def history(self) -> list[Message]:
        return self.context.history

    def size(self) -> int:
        """harness/compaction.py's estimate of the next request, counting only what was
        added since the last call: a budget asks before every request, and walking a long
        thread's whole history each time would slow every request of it. A history
        rewritten meanwhile (compaction, a thread's ``rewrites``), or one that cannot
        say so (a plain list), is counted again whole."""
        history = self.history
        rewrites = getattr(history, "rewrites", None)
        if self._fixed is None:
            self._fixed = fixed_chars(self.context.system_prompt, self.toolset.specs())
        if rewrites is None or rewrites != self._rewrites or len(history) < self._counted:
            self._counted, self._chars, self._rewrites = 0, 0, rewrites
        self._chars += sum(message_chars(m) for m in history[self._counted:])
        self._counted = len(history)
        return (self._fixed + self._chars) // CHARS_PER_TOKEN + 1


class _Metered:
    """A model whose every request is counted by the run's meter, once, when it ends
    (a failed one too: what it used is spent; one cut short by cancellation, as a
    request with no usage known). ``turn``: where a turn's usage goes."""

    def __init__(self, model: Model, meter: Meter, turn: _Turn | None = None) -> None:
        self.model = model
        self.meter = meter
        self.turn = turn

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        counted = False
        try:
            async for part in self.model.stream(request):
                if isinstance(part, Done | Failed) and not counted:
                    counted = True
                    usage = self.meter.record_request(part.usage)
                    if self.turn is not None:
                        self.turn.usage = usage
                yield part
        finally:
            if not counted:
                self.meter.record_request(None)
