"""Every event a run emits, as one discriminated union.

The page receives these as JSON (camelCase keys). ``pyharness schema`` publishes the
JSON Schema and the TypeScript types generated from these models
(``embed/shared/events.schema.json``, ``embed/shared/events.d.ts``); a contract test keeps the
committed files in step with this module.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

from .limits import MAX_EVENT_TEXT_CHARS, clean_text, cut_text

StopReason = Literal["stop", "max_steps", "aborted", "error", "budget"]
"""Why a run ended: a final answer, the step limit, cancellation, a failure, a budget
limit (``createHarness({budget})``: docs/embedding.md, Budgets)."""

BudgetScope = Literal["run", "thread", "harness"]
BudgetKind = Literal["tokens", "cost", "requests", "toolCalls", "timeMs"]


_CONFIG = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=True,
    frozen=True,
    # In the published schema a field with a default (``type``) is still always sent.
    json_schema_serialization_defaults_required=True,
    # Built on first use (the first run), not at import: keeps them out of the boot.
    defer_build=True,
)


class _Event(BaseModel):
    model_config = _CONFIG

    run_id: str = Field(description="The run this event belongs to.")
    seq: int = Field(description="Position of the event within its run, from 0, no gaps.")
    parent_run_id: str | None = Field(
        default=None, description="A subagent's event: the run whose `task` call started it.")
    parent_call_id: str | None = Field(default=None, description="A subagent's event: that "
                                       "`task` call's id.")
    depth: int | None = Field(default=None, description="A subagent's event: 1 for a subagent "
                              "of a page's run, 2 for one of a subagent.")


class Tokens(BaseModel):
    """Token counts of model requests, as the provider reports them."""

    model_config = _CONFIG

    input_tokens: int = Field(default=0, description="Every input token, cached or not.")
    output_tokens: int = Field(default=0, description="Every output token, reasoning included.")
    cache_read_tokens: int = Field(default=0, description="Of the input, read from the "
                                   "provider's prompt cache.")
    cache_write_tokens: int = Field(default=0, description="Of the input, written to the "
                                    "provider's prompt cache.")
    reasoning_tokens: int = Field(default=0, description="Of the output, reasoning "
                                  "(where the provider says).")


class Usage(Tokens):
    """What model requests used: their tokens, and their cost where it is known."""

    cost: float | None = Field(default=None, description="USD, from model.prices; null when "
                               "a price the tokens need is not given (never a guess).")


class Totals(Usage):
    """What a run (or a thread, or the harness) used, everything a budget counts."""

    requests: int = Field(default=0, description="Model requests made.")
    tool_calls: int = Field(default=0, description="Tool calls run.")
    time_ms: int = Field(default=0, description="Wall time of the runs, ms.")


class BudgetLimit(BaseModel):
    """A budget limit: the one that stopped a run (``stopReason: "budget"``), or one
    that is 80 % used (a ``budget`` notice)."""

    model_config = _CONFIG

    scope: BudgetScope = Field(description="Whose limit: this run's, the thread's, or the "
                               "harness's.")
    limit: BudgetKind
    max: float = Field(description="The limit.")
    used: float | None = Field(description="What is used of it; null: a cost that could "
                               "not be priced.")
    message: str


class AttachmentRef(BaseModel):
    """A file attached to a prompt (h.prompt(text, {attachments})), as the page wrote it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    path: str
    media_type: str
    size: int
    sha256: str | None = Field(
        default=None, description="The file's SHA-256 (hex) as the page wrote it, taken when "
        "the run began and kept with the thread, where the model cannot change it: a reader "
        "draws the file from /work only while it still matches (the model can rewrite /work).")


class RunStart(_Event):
    """A run began: the prompt was accepted."""

    type: Literal["run_start"] = "run_start"
    prompt: str
    mode: Literal["plan"] | None = Field(
        default=None, description='"plan": a plan run (read-only tools; its answer is a '
        "``plan`` event).")
    plan: str | None = Field(default=None, description="The approved plan this run carries "
                             "out (h.prompt(text, {plan})), given to the model with the prompt.")
    attachments: list[AttachmentRef] = Field(
        default_factory=list, description="The files attached to the prompt, in /work.")


class TurnStart(_Event):
    """One model request begins (a run has one turn per model call)."""

    type: Literal["turn_start"] = "turn_start"
    turn: int = Field(description="Turn number within the run, from 1.")


class TextDelta(_Event):
    """A piece of the assistant's text, as it streams."""

    type: Literal["text_delta"] = "text_delta"
    delta: str


class ReasoningDelta(_Event):
    """A piece of the model's reasoning, when the provider streams it (not part of the
    answer text)."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    delta: str


class ToolStart(_Event):
    """The model called a tool; it is about to run."""

    type: Literal["tool_start"] = "tool_start"
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolEnd(_Event):
    """A tool call finished; ``output`` is what the model sees."""

    type: Literal["tool_end"] = "tool_end"
    call_id: str
    name: str
    output: str
    is_error: bool


class TurnEnd(_Event):
    """The model request of this turn finished (tools of the turn have run)."""

    type: Literal["turn_end"] = "turn_end"
    turn: int
    stop_reason: Literal["stop", "tool_calls", "error"]
    usage: Usage | None = Field(default=None, description="This request's, when the "
                                "provider reported it.")


class RunEnd(_Event):
    """The run is over. Always the last event of a run."""

    type: Literal["run_end"] = "run_end"
    text: str = Field(description="The final assistant text (possibly partial if aborted).")
    stop_reason: StopReason
    usage: Totals | None = Field(default=None, description="What the run used (every model "
                                 "request, summaries included).")
    budget: BudgetLimit | None = Field(default=None, description='With stopReason "budget": '
                                      "the limit that stopped the run.")


class Plan(_Event):
    """A plan run's answer: the plan, for the page to show, edit and approve (then
    ``h.prompt(text, {plan})`` carries it out). Comes right before its ``run_end``."""

    type: Literal["plan"] = "plan"
    text: str


class Notice(_Event):
    """Something the page should know that does not stop the run: a skill skipped for
    its malformed front matter (``skill_skipped``: told once, the model is told in its
    prompt), or 80 % of a budget limit used (``budget``: once per limit)."""

    type: Literal["notice"] = "notice"
    code: str
    message: str
    budget: BudgetLimit | None = Field(default=None, description='With code "budget": the '
                                      "limit, and what is used of it.")


class ErrorEvent(_Event):
    """The run failed; a ``run_end`` with stop reason ``error`` follows."""

    type: Literal["error"] = "error"
    code: str = Field(description="A stable error code, e.g. 'model_error', 'internal'.")
    message: str


class Compaction(_Event):
    """The history the model sees was shortened to fit its context window (the
    transcript the page keeps is not)."""

    type: Literal["compaction"] = "compaction"
    reason: Literal["window", "provider"] = Field(
        description="'window': the request would exceed contextWindow; 'provider': the "
        "provider said the context was too long.")
    before_tokens: int = Field(description="Estimated tokens of the request before.")
    after_tokens: int = Field(description="Estimated tokens after.")
    shortened_outputs: int = Field(description="Older tool outputs cut to head and tail.")
    summarized_messages: int = Field(
        description="Older messages replaced by a summary written by the model (0: none).")


class ApprovalRequest(_Event):
    """A permission rule said ``ask``: the call waits for the page's ``onApproval``
    (docs/embedding.md, Permissions). An ``approval_result`` always follows."""

    type: Literal["approval_request"] = "approval_request"
    call_id: str
    tool: str
    input: dict[str, Any] = Field(description="The call's arguments, as the model sent them.")
    rule: str = Field(description="The rule that asked, e.g. 'bash: \"*\"'.")
    subject: str | None = Field(default=None, description="What the rule matched: the path "
                                "(relative to /work) or the command line.")
    diff: str | None = Field(default=None, description="For write and edit: the unified diff "
                             "the call would apply.")


class ApprovalResult(_Event):
    """How a call a rule governs was decided: by the page (``once``, ``always``, ``deny``),
    by a rule (a ``deny`` rule, or an earlier ``always``), or denied because no answer
    came in time (``timeout``) or the run was cancelled (``cancel``)."""

    type: Literal["approval_result"] = "approval_result"
    call_id: str
    decision: Literal["once", "always", "deny"]
    by: Literal["page", "rule", "timeout", "cancel"]
    message: str | None = Field(default=None, description="The page's message to the model, "
                                "or why the call was denied.")


class FileChange(BaseModel):
    """A path in ``/work`` changed (from the change journal, harness/workspace/journal.py): one
    event per path a call changed, coalesced over the call (a file made and then written
    is one ``created``), in the order the call first touched them. Sent after the call,
    for a tool call before its ``tool_end``. Not a run's numbered event: ``h.subscribe``
    gets these also outside a run (``h.fs`` calls), with ``runId`` null."""

    model_config = _CONFIG

    type: Literal["file_change"] = "file_change"
    run_id: str | None = Field(description="The run of the tool call, or null (a page call).")
    seq: int = Field(description="Position among this harness's file_change events, from 0, "
                     "no gaps (runs number their own events apart).")
    path: str = Field(description="The path, /work/...")
    kind: Literal["created", "modified", "deleted", "renamed"]
    from_: str | None = Field(default=None, alias="from",
                              description="For 'renamed': the path it had before.")
    entry: Literal["file", "dir"] = Field(description="A file or a folder (for 'deleted': what "
                                          "was there).")
    size: int | None = Field(default=None, description="The file's size now (not for a folder or "
                             "a deletion).")
    call_id: str | None = Field(description="The tool call that made it, or null (the page).")
    tool: str | None = Field(description="That call's tool, or null (the page).")


Event = Annotated[
    RunStart | TurnStart | TextDelta | ReasoningDelta | ToolStart | ToolEnd | TurnEnd | RunEnd
    | Plan | Notice | ErrorEvent | Compaction | ApprovalRequest | ApprovalResult | FileChange,
    Field(discriminator="type"),
]
EVENT_TYPES: tuple[type[BaseModel], ...] = (
    RunStart, TurnStart, TextDelta, ReasoningDelta, ToolStart, ToolEnd, TurnEnd, RunEnd,
    Plan, Notice, ErrorEvent, Compaction, ApprovalRequest, ApprovalResult, FileChange,
)
# What the journal calls a change, as a file_change says it: (kind, entry).
_KINDS = {"created": ("created", "file"), "dir_created": ("created", "dir"),
          "modified": ("modified", "file"), "mode_changed": ("modified", "file"),
          "deleted": ("deleted", "file"), "dir_deleted": ("deleted", "dir"),
          "renamed": ("renamed", "file")}


def file_changes(changes: list[tuple[str, str, str | None]], run_id: str | None,
                 call_id: str | None, tool: str | None,
                 stat: Any, seq: int) -> list[FileChange]:
    """The file_change events of one call's journal changes (``Journal.changes``), the
    first numbered ``seq``; ``stat(path)`` gives ``(is_dir, size)`` of a path now, or None
    when it is gone."""
    out: list[FileChange] = []
    for path, kind, source in changes:
        wire, entry = _KINDS[kind]
        now = None if wire == "deleted" else stat(path)
        if now is None and wire != "deleted":
            continue  # gone since (a later change says so)
        if now is not None:
            entry = "dir" if now[0] else "file"
        out.append(FileChange(run_id=run_id, seq=seq + len(out), path=clean_text(path), kind=wire,
                              from_=None if source is None else clean_text(source), entry=entry,
                              size=None if now is None or now[0] else now[1], call_id=call_id,
                              tool=tool))
    return out


@functools.cache
def event_adapter() -> TypeAdapter[Event]:
    """Validates any event (tests, the schema generator); built on first use."""
    return TypeAdapter(Event)


def to_json(event: _Event) -> str:
    """The wire form of an event: compact JSON with camelCase keys."""
    return event.model_dump_json(by_alias=True, exclude_none=True)


def safe_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """Event fields made safe to serialise and to show: lone surrogates become U+FFFD
    and each string is cut to :data:`~harness.limits.MAX_EVENT_TEXT_CHARS`."""
    return {name: _safe(value) for name, value in fields.items()}


def _safe(value: Any) -> Any:
    if isinstance(value, str):
        return cut_text(clean_text(value), MAX_EVENT_TEXT_CHARS)
    if isinstance(value, dict):
        return {clean_text(str(k)): _safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_safe(v) for v in value]
    return value


class Emitter:
    """Stamps events of one run with its id and a gap-free sequence number.

    Every field goes through :func:`safe_fields`, so no text (a model's, a tool's, the
    page's) can make an event fail to serialise. A number is used up only once the
    sink took the event: if the sink raises, the next event reuses it (no gap).
    """

    def __init__(self, run_id: str, sink: Any,
                 nest: tuple[str, str, int] | None = None) -> None:
        self.run_id = clean_text(run_id)
        self._sink = sink
        self._seq = 0
        self.depth = 0 if nest is None else nest[2]  # a subagent's: 1 and more
        # a subagent's run: its parent run, the parent's task call, its depth
        self._nest: dict[str, Any] = {} if nest is None else {
            "parent_run_id": nest[0], "parent_call_id": nest[1], "depth": nest[2]}

    def __call__(self, cls: type[_Event], **fields: Any) -> None:
        event = cls(run_id=self.run_id, seq=self._seq, **self._nest, **safe_fields(fields))
        self._sink(event)
        self._seq += 1
