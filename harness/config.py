"""The options a page passes to ``createHarness``, as the worker receives them.

Validated on arrival; a bad option is a :class:`UsageError` whose message names the
option and the fix, and the boot fails with it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from .errors import UsageError
from .limits import loads_bounded
from .models.configs import AnthropicMessagesConfig, OpenAIChatConfig
from .models.scripted import ScriptedConfig

BUILTIN_TOOL_NAMES = ("read", "write", "edit", "ls", "grep", "find")
MIB = 1024 * 1024
TOOL_NAME = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"

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
    methods: list[HttpMethod] = Field(default_factory=lambda: list(SAFE_METHODS), min_length=1,
                                      description='Default ["GET", "HEAD"].')
    max_response_bytes: int = Field(default=10 * MIB, ge=1024, le=100 * MIB,
                                    description="Responses larger than this are refused "
                                    "(default 10 MiB).")


class PackagesPolicy(BaseModel):
    """``createHarness({packages: {...}})``: the package indexes ``pip`` in the sandbox may
    use besides the bundle's own (checked on the page, which fetches for it)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    index_urls: list[Annotated[str, Field(pattern=r"^https?://[^/?#@\s]+(/[^#\s]*)?$",
                                          max_length=2000)]] = Field(
        default_factory=list, max_length=10,
        description="PyPI-compatible indexes (simple or JSON API) that send CORS headers, "
        "e.g. https://pypi.example.com/simple")


class GitAuthor(BaseModel):
    """Who the shell's ``git`` commits as, unless ``git config user.name``/``user.email``
    or ``GIT_AUTHOR_*`` in the shell say otherwise."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=r"^[^<>\x00-\x1f\x7f]*$",
                      description="No <, > or control characters.")
    email: str = Field(min_length=1, max_length=200, pattern=r"^[^<>\s\x00-\x1f\x7f]*$",
                       description="No <, >, spaces or control characters.")


DEFAULT_GIT_AUTHOR = GitAuthor(name="pyharness agent", email="agent@pyharness.invalid")


class GitConfig(BaseModel):
    """``createHarness({git: {...}})``: the shell's ``git`` (shell/git/)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    author: GitAuthor = Field(default=DEFAULT_GIT_AUTHOR,
                              description='Default author and committer (default "pyharness '
                              'agent" <agent@pyharness.invalid>).')
    cors_proxy: str | None = Field(
        default=None, pattern=r"^https?://[^/?#@\s]+(/[^?#\s]*)?$", max_length=2000,
        description="Where a remote's requests go instead, as <corsProxy>/<host>/<path>: for "
        "a git host that sends no CORS headers (the page's own proxy). The rules are checked "
        "on the remote's URL.")


class ShellConfig(BaseModel):
    """``createHarness({shell: {...}})``; ``shell: true`` takes every default."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = Field(default="bash", pattern=TOOL_NAME,
                      description='The tool\'s name (default "bash").')
    timeout_ms: int = Field(default=10_000, ge=1, le=600_000,
                            description="Wall-clock limit of one call, ms (default 10000) "
                            "→ exit 124.")
    max_commands: int = Field(default=10_000, ge=1, le=10_000_000,
                              description="Commands per call, also the loop-iteration limit "
                              "(default 10000) → exit 126.")
    max_output: int = Field(default=20_000, ge=100, le=10_000_000,
                            description="Characters of stdout and of stderr the model sees, "
                            "head and tail kept (default 20000).")
    max_output_bytes: int = Field(default=8 * MIB, ge=1024, le=1024 * MIB,
                                  description="Bytes one call may write, to its output or to "
                                  "files (default 8 MiB).")
    # Filled from the top-level ``network`` option (HarnessConfig.shell_config).
    network: NetworkPolicy | None = Field(default=None, exclude=True)
    # Filled from the top-level ``packages`` option.
    packages: PackagesPolicy | None = Field(default=None, exclude=True)
    # Filled from the top-level ``git`` option.
    git: GitConfig = Field(default_factory=GitConfig, exclude=True)


class PageSkill(BaseModel):
    """One of ``createHarness({skills: [...]})``: listed by name and description; the
    model gets ``content`` from the ``skill`` tool when it needs it (harness/project.py)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    description: str = Field(min_length=1, max_length=1024, pattern=r"^[^\x00-\x1f\x7f]*$",
                             description="One line: no control characters.")
    content: str = Field(max_length=64 * 1024)


class PageToolSpec(BaseModel):
    """One of ``createHarness({tools: [...]})``, as the worker receives it (its ``run``
    stays on the page)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: str = Field(pattern=TOOL_NAME)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}})
    timeout_ms: int = Field(default=60_000, ge=1, le=3_600_000,
                            description="A call that has not answered by then is an error.")
    read_only: bool = Field(default=False, description="The tool changes nothing: a plan "
                            "run offers it (default false: not offered while planning).")

class PlanConfig(BaseModel):
    """``createHarness({plan: {...}})``: what a plan run (``h.prompt(text, {mode:
    "plan"})``) may use besides the read-only tools."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    commands: list[Annotated[str, Field(min_length=1, max_length=1000)]] = Field(
        default_factory=list, max_length=200,
        description='Shell commands a plan run may run, as permission patterns (e.g. '
        '"ls *", "cat *", "git status*"); none: no shell while planning. Whatever they '
        "run, their changes to /work are refused.")


class BudgetLimits(BaseModel):
    """The limits of one budget scope; each optional (none: no limit of that kind)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    tokens: int | None = Field(default=None, ge=1, description="Input plus output tokens.")
    cost: float | None = Field(default=None, gt=0, description="USD (needs model.prices).")
    requests: int | None = Field(default=None, ge=1, description="Model requests.")
    tool_calls: int | None = Field(default=None, ge=0, description="Tool calls.")
    time_ms: int | None = Field(default=None, ge=1, le=86_400_000 * 365,
                                description="Wall time of runs, ms.")


class Budget(BaseModel):
    """``createHarness({budget})`` (and ``h.setBudget``): hard limits per run, per thread
    (each thread's own usage, kept with it) and per harness (since createHarness). A run
    stops with stopReason "budget" before a model request or tool call would pass one
    (harness/budget.py)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    run: BudgetLimits | None = None
    thread: BudgetLimits | None = None
    harness: BudgetLimits | None = None

    def needs_prices(self) -> bool:
        return any(scope is not None and scope.cost is not None
                   for scope in (self.run, self.thread, self.harness))


class SubagentConfig(BaseModel):
    """``createHarness({subagents: {...}})``; ``subagents: true`` takes every default."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    max_concurrent: int = Field(default=4, ge=1, le=8, description="Subagents of one run "
                                "at a time (default 4; more task calls wait for a slot).")
    max_depth: int = Field(default=2, ge=1, le=3, description="How deep subagents nest "
                           "(default 2: a subagent may start its own, which may not).")
    max_answer_chars: int = Field(default=20_000, ge=100, le=200_000,
                                  description="Characters of a subagent's answer its parent "
                                  "gets, head and tail kept (default 20000).")
    budget: BudgetLimits | None = Field(default=None, description="Each subagent's own "
                                        "run limits (the model may ask for lower ones).")


ModelConfig = Annotated[
    ScriptedConfig | OpenAIChatConfig | AnthropicMessagesConfig, Field(discriminator="api")
]


class HarnessConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    model: ModelConfig = Field(description="The model, chosen by wire API.")
    system_prompt: str | None = Field(
        default=None, description="Replaces the default system prompt (an environment "
        "section is always appended)."
    )
    max_steps: int = Field(default=50, ge=1, le=1000, description="Model requests per run "
                           'before it stops with "max_steps" (default 50).')
    builtin_tools: list[str] = Field(
        default_factory=lambda: list(BUILTIN_TOOL_NAMES),
        description="Which built-in tools the model gets (default: all six).",
        # the names in the generated .d.ts (checked below, with a message that lists them)
        json_schema_extra={"items": {"enum": list(BUILTIN_TOOL_NAMES)}})
    shell: bool | ShellConfig = Field(
        default=False, description="The shell tool (just-bash + python3 over /work, in the "
        "sandbox): true, or its limits; off by default.")
    page_tools: list[PageToolSpec] = Field(
        default_factory=list, description="The page's tools (the `tools` option and the MCP "
        "servers'), without `run`: a call goes to the page.")
    network: NetworkPolicy | None = Field(
        default=None, description="What the model's code may fetch (shell only); off by default.")
    packages: PackagesPolicy | None = Field(
        default=None, description="Package indexes pip may use besides the bundle's own "
        "(shell only); off by default.")
    git: GitConfig | None = Field(
        default=None, description="The shell's git: who it commits as (shell only).")
    instructions: bool = Field(
        default=True, description="Add /work/AGENTS.md (and instructionFiles) to the system "
        "prompt at the start of each run (default true; bounded to 32 KiB a file, "
        "truncated with a note).")
    instruction_files: list[Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=list, max_length=20,
        description="More workspace files added like AGENTS.md, each under its own heading "
        "(at most 20).")
    skills: list[PageSkill] = Field(
        default_factory=list, max_length=100,
        description="Skills of the page's, listed by name and description beside the "
        "workspace's `.agents/skills/<name>/SKILL.md`; the model gets `content` from the "
        "`skill` tool.")
    permissions: dict[str, Any] | None = Field(
        default=None, description="Permission rules per tool (harness/policy/permissions.py): an "
        "action, or glob patterns to actions; checked at boot against the tools.")
    approval_timeout_ms: int = Field(
        default=300_000, ge=1, le=86_400_000,
        description="How long a call waits for onApproval before it is denied "
        "(default 300000 ms).")
    read_before_write: bool = Field(
        default=True, description="write and edit change an existing file only once the "
        "model has read it as it is now in this thread (default true); false turns the "
        "check off.")
    subagents: bool | SubagentConfig = Field(
        default=False, description="The task tool: the model delegates to subagents with a "
        "fresh conversation (each spends tokens); true, or limits; off by default.")
    plan: PlanConfig | None = Field(
        default=None, description="What a plan run may use besides the read-only tools "
        "(shell commands); none: read, ls, grep, find, skills and readOnly page tools.")
    budget: Budget | None = Field(
        default=None, description="Limits on tokens, cost, model requests, tool calls and "
        "wall time, per run, thread and harness; off by default.")
    preview: bool = Field(
        default=False, description="The preview_errors tool: the model reads what the "
        "page's preview of the site (h.preview, the widget's Preview tab) said when it last "
        "loaded (errors, console); off by default.")
    checkpoints: bool = Field(
        default=True, description="Keep a checkpoint of every run that changes /work, for "
        "h.revert and h.diff (default true); false takes no pre-images (h.revert is EINVAL).")

    @property
    def shell_config(self) -> ShellConfig | None:
        """The shell's settings, or None when the shell is off."""
        if self.shell is False:
            return None
        shell = ShellConfig() if self.shell is True else self.shell
        return shell.model_copy(update={"network": self.network, "packages": self.packages,
                                        "git": self.git or GitConfig()})


def parse_config(config_json: str) -> HarnessConfig:
    """The page's options, validated (raises :class:`UsageError` naming the option)."""
    try:
        config = HarnessConfig.model_validate_json(_clean_options(config_json))
    except ValidationError as exc:
        where, why = first_error(exc)
        raise UsageError(f"invalid option '{where}': {why}") from None
    names = [t.name for t in config.page_tools]
    if len(names) != len(set(names)):
        raise UsageError(f"two page tools have the same name: {names}; names must be unique")
    check_budget(config.budget, config.model)
    agents = config.subagents
    if isinstance(agents, SubagentConfig) and agents.budget is not None:
        check_budget(Budget(run=agents.budget), config.model)
    unknown = [n for n in config.builtin_tools if n not in BUILTIN_TOOL_NAMES]
    if unknown:
        raise UsageError(
            f"unknown built-in tool(s) {unknown} in builtinTools; "
            f"choose from {list(BUILTIN_TOOL_NAMES)}"
        )
    return config


def first_error(exc: ValidationError) -> tuple[str, str]:
    """Where the first error of a validation is (dotted, as the page wrote it), and why."""
    err = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
    return where, err["msg"]


def check_budget(budget: Budget | None, model: ModelConfig) -> None:
    """A cost limit needs prices to count against (raises :class:`UsageError`)."""
    if budget is not None and budget.needs_prices() and model.prices is None:
        raise UsageError("budget.cost needs model.prices (USD per million tokens, e.g. "
                         "{input: 3, output: 15}): without them no cost can be counted")


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
