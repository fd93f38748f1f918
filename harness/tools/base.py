"""The tool interface and the tool set the loop calls.

A tool declares its parameters as a pydantic model; the tool set validates the
model's raw JSON arguments against it, so a tool's ``run`` only ever sees valid input.
Every failure becomes an error *result* the model reads, never an exception.
"""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from ..errors import FsError, ToolError
from ..limits import MAX_TOOL_ARGUMENTS_CHARS, JsonLimitError, clean_text, loads_bounded
from ..messages import Image
from ..models.base import ToolSpec
from ..workspace.jail import Workspace
from ..workspace.journal import Journal
from .reads import Reads

SubjectKind = Literal["path", "command", "none"]
"""What a permission rule of a tool matches (harness/policy/permissions.py): its workspace path,
its command line, or nothing (an action only)."""


@dataclass
class ToolContext:
    """What a running tool may use (a tool's own capability, such as the page's tool
    caller or the shell's runner, is given to it when it is made)."""

    workspace: Workspace
    journal: Journal | None = None  # the tool's changes are recorded under its call's id
    reads: Reads | None = None  # what the model saw of each file (None: write unchecked)
    vision: bool = False  # the model takes images: read returns an image file as one
    # The read rule's deny (harness/policy/permissions.py), on a workspace-relative path: what
    # ls, grep and find skip (None: nothing is denied).
    hidden: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class ToolReply:
    """What a tool returns when it shows the model images too (read of an image file)."""

    text: str
    images: tuple[Image, ...] = ()


Gate = Callable[["Tool", Any], Awaitable[str | None]]
"""Asked before a valid call runs: None lets it run, a text refuses it (the result)."""


@dataclass(frozen=True)
class ToolOutcome:
    output: str
    is_error: bool = False
    images: tuple[Image, ...] = ()


class Tool(ABC):
    """A tool the model can call. Subclasses set the class attributes and ``run``."""

    name: str
    description: str
    Params: ClassVar[type[BaseModel]]
    subject_kind: ClassVar[SubjectKind] = "none"

    def subject(self, params: Any, ctx: ToolContext) -> str | None:
        """What a permission rule matches for this call: its path relative to /work
        (after the jail resolved it: "." is the root) or its command line; None when the
        tool has neither. Raises ``FsError`` for a path outside the workspace."""
        return None

    def preview(self, params: Any, ctx: ToolContext) -> str | None:
        """What the call would change, for the page to see before it approves (a
        unified diff); None when there is nothing to show. Changes nothing."""
        return None

    def basis(self, params: Any, ctx: ToolContext) -> str | None:
        """What the preview was computed from, as a value that changes whenever that
        does (for ``write`` and ``edit``: the target file's SHA-256, or "absent"). An
        approval is bound to it: the call runs only if it is the same after the answer
        (harness/policy/approvals.py). None: the call is bound to nothing. Changes nothing;
        raises ``FsError`` for a path outside the workspace."""
        return None

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the arguments, as the model is told (shared: read only)."""
        return _json_schema(self.Params)

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)

    def parse(self, arguments: dict[str, Any]) -> Any:
        """Validate parsed JSON arguments; raise :class:`ToolError` saying what is wrong."""
        try:
            return self.Params.model_validate(arguments)
        except ValidationError as exc:
            raise ToolError(_describe_invalid(self.name, exc)) from None

    @abstractmethod
    async def run(self, params: Any, ctx: ToolContext) -> str | ToolReply:
        """Do the work; raise :class:`ToolError` (or ``FsError``) for an error result."""


class ToolSet:
    """The tools of one agent, by name; a later tool of the same name replaces an earlier."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def specs(self) -> list[ToolSpec]:
        return [t.spec() for t in self._tools.values()]

    async def execute(self, name: str, arguments: str | dict[str, Any],
                      ctx: ToolContext, gate: Gate | None = None) -> ToolOutcome:
        """Run one call. ``arguments`` is the model's text, or the object already parsed
        from it by :func:`parse_arguments` (the loop parses once, for its event too).
        ``gate`` sees the valid call before it runs: the text it returns refuses it
        (the permission rules, harness/policy/approvals.py)."""
        tool = self._tools.get(name)
        if tool is None:
            return ToolOutcome(
                f"Unknown tool '{name}'. Available tools: {', '.join(self._tools) or 'none'}.",
                is_error=True,
            )
        try:
            params = tool.parse(parse_arguments(arguments) if isinstance(arguments, str)
                                else arguments)
        except ToolError as exc:
            return ToolOutcome(str(exc), is_error=True)
        if gate is not None:
            refusal = await gate(tool, params)
            if refusal is not None:
                return ToolOutcome(refusal, is_error=True)
        try:
            reply = await tool.run(params, ctx)
            if isinstance(reply, ToolReply):
                return ToolOutcome(clean_text(reply.text), images=reply.images)
            return ToolOutcome(clean_text(reply))
        except (FsError, ToolError) as exc:
            return ToolOutcome(clean_text(str(exc)), is_error=True)


@functools.cache
def _json_schema(params: type[BaseModel]) -> dict[str, Any]:
    # Generated once per class: the loop asks for every tool's schema on every turn,
    # and generating one costs about a millisecond (more in Pyodide).
    return params.model_json_schema()


def parse_arguments(arguments: str) -> dict[str, Any]:
    """Parse the model's arguments text: size and nesting are checked before parsing
    (the parser recurses), and lone surrogates in strings become U+FFFD."""
    if arguments.strip() == "":
        return {}
    try:
        value = loads_bounded(arguments, "The tool arguments", MAX_TOOL_ARGUMENTS_CHARS)
    except JsonLimitError as exc:
        raise ToolError(f"{exc}; the call was not run. Send flat, smaller arguments.") from None
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"The tool arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
            "the call was not run. Send the arguments as one JSON object."
        ) from None
    if not isinstance(value, dict):
        raise ToolError("The tool arguments must be a JSON object; the call was not run.")
    return value


def _describe_invalid(name: str, exc: ValidationError) -> str:
    lines = [f"Invalid arguments for tool '{name}'; the call was not run:"]
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        lines.append(f"- {where}: {err['msg']}")
    return "\n".join(lines)
