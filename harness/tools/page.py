"""Tools the page defines: ``createHarness({tools: [{name, description, parameters,
run}]})``. The schema is the page's JSON Schema, checked with jsonschema (loaded only
when there are page tools); ``run`` stays on the page and is reached through the
runtime's :class:`~harness.runtime.PageToolCaller`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..config import PageToolSpec
from ..errors import ToolError, UsageError
from ..limits import MAX_SCHEMA_DEPTH, json_depth
from ..runtime import PageToolCaller
from .base import Tool, ToolContext
from .truncate import format_size, truncate_head


class PageTool(Tool):
    description = ""

    def __init__(self, spec: PageToolSpec, caller: PageToolCaller | None) -> None:
        from jsonschema import exceptions, validators

        self.name = spec.name
        self.description = spec.description
        self.timeout_ms = spec.timeout_ms
        self._schema = spec.parameters
        depth = json_depth(json.dumps(spec.parameters))
        if depth > MAX_SCHEMA_DEPTH:  # jsonschema recurses per level, twice per call
            raise UsageError(f"page tool '{spec.name}': parameters nest {depth} levels deep; "
                             f"the limit is {MAX_SCHEMA_DEPTH} (use $defs for shared parts)")
        cls = validators.validator_for(spec.parameters)
        try:
            cls.check_schema(spec.parameters)
        except exceptions.SchemaError as exc:
            raise UsageError(
                f"page tool '{spec.name}': parameters is not a valid JSON Schema: {exc.message}"
            ) from None
        self._validator = cls(spec.parameters)
        self._caller = caller

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema

    def parse(self, arguments: dict[str, Any]) -> Any:
        try:
            errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
        except RecursionError:  # a recursive schema ($ref to itself) over deep arguments
            raise ToolError(f"The arguments for tool '{self.name}' nest too deeply to check; "
                            "the call was not run. Send flatter arguments.") from None
        if errors:
            lines = [f"Invalid arguments for tool '{self.name}'; the call was not run:"]
            for err in errors[:10]:
                where = ".".join(str(p) for p in err.path) or "arguments"
                lines.append(f"- {where}: {err.message}")
            raise ToolError("\n".join(lines))
        return arguments

    async def run(self, params: Any, ctx: ToolContext) -> str:
        if self._caller is None:
            raise ToolError(f"The page tool '{self.name}' can only run in the browser.")
        try:
            async with asyncio.timeout(self.timeout_ms / 1000):
                output, is_error = await self._caller.call(self.name, json.dumps(params))
        except TimeoutError:
            raise ToolError(
                f"The page tool '{self.name}' did not answer within {self.timeout_ms} ms; "
                "it was cancelled."
            ) from None
        output = _bounded(output)
        if is_error:
            raise ToolError(output)
        return output


def _bounded(output: str) -> str:
    """The page's output, cut like a built-in tool's (2000 lines or 50 KB): it goes into
    the conversation, and an oversized one would make every later model request fail."""
    cut = truncate_head(output)
    if not cut.truncated:
        return output
    return (f"{cut.text}\n\n[Output cut: the page tool returned {format_size(cut.total_bytes)} "
            f"in {cut.total_lines:,} lines; the first {format_size(cut.shown_bytes)} "
            f"({cut.shown_lines:,} whole lines) are shown.]")
