"""Tools the page defines: ``createHarness({tools: [{name, description, parameters,
run}]})``, and an MCP server's tools (embed/page/mcp.mjs). The schema is the page's JSON
Schema, checked with jsonschema (loaded only when there are page tools) in bounded time
(:mod:`~harness.tools.schema_guard`: it may be an MCP server's); ``run`` stays on the
page and is reached through the runtime's :class:`~harness.runtime.PageToolCaller`.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

from ..config import PageToolSpec
from ..errors import ToolError, UsageError
from ..images import IMAGE_TYPES, MAX_IMAGE_BYTES
from ..limits import MAX_SCHEMA_DEPTH, json_depth
from ..messages import Image
from ..runtime import PageToolCaller
from .base import Tool, ToolContext, ToolReply
from .schema_guard import bounded, guarded_validator
from .truncate import format_size, truncate_head


class PageTool(Tool):
    description = ""

    def __init__(self, spec: PageToolSpec, caller: PageToolCaller | None) -> None:
        from jsonschema import exceptions, validators

        self.name = spec.name
        self.description = spec.description
        self.timeout_ms = spec.timeout_ms
        self.read_only = spec.read_only  # offered in plan runs (harness/policy/plan.py)
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
        # No $ref leaves the schema: a remote one would be fetched by the worker.
        resolver = validators.RefResolver.from_schema(
            spec.parameters, handlers={scheme: _no_remote_ref for scheme in _REF_SCHEMES})
        self._validator = guarded_validator(cls)(spec.parameters, resolver=resolver)
        self._caller = caller

    @property
    def parameters(self) -> dict[str, Any]:
        return self._schema

    def parse(self, arguments: dict[str, Any]) -> Any:
        from jsonschema import exceptions

        try:
            with bounded():
                errors = sorted(self._validator.iter_errors(arguments),
                                key=lambda e: [str(p) for p in e.path])
        except RecursionError:  # a recursive schema ($ref to itself) over deep arguments
            raise ToolError(f"The arguments for tool '{self.name}' nest too deeply to check; "
                            "the call was not run. Send flatter arguments.") from None
        except exceptions.RefResolutionError as exc:
            raise ToolError(f"The schema of tool '{self.name}' has a $ref that cannot be "
                            f"resolved ({str(exc)[:200]}); the call was not run.") from None
        if errors:
            lines = [f"Invalid arguments for tool '{self.name}'; the call was not run:"]
            for err in errors[:10]:
                where = ".".join(str(p) for p in err.path)[:200] or "arguments"
                lines.append(f"- {where}: {_cut(err.message)}")
            raise ToolError("\n".join(lines))
        return arguments

    async def run(self, params: Any, ctx: ToolContext) -> str | ToolReply:
        if self._caller is None:
            raise ToolError(f"The page tool '{self.name}' can only run in the browser.")
        try:
            async with asyncio.timeout(self.timeout_ms / 1000):
                result = await self._caller.call(self.name, json.dumps(params))
        except TimeoutError:
            raise ToolError(
                f"The page tool '{self.name}' did not answer within {self.timeout_ms} ms; "
                "it was cancelled."
            ) from None
        output, is_error = _bounded(result[0]), result[1]
        if is_error:
            raise ToolError(output)
        shown = _images(self.name, result[2] if len(result) > 2 else "[]")
        if shown and ctx.vision:
            return ToolReply(output, shown)
        return output  # the text names the images (embed/page/mcp.mjs)


_REF_SCHEMES = ("", "http", "https", "file", "ftp", "data", "urn")


def _no_remote_ref(uri: str) -> Any:
    from jsonschema import exceptions

    raise exceptions.RefResolutionError(f"{uri[:100]!r} is outside the schema")


def _cut(message: str) -> str:
    """A jsonschema message quotes the value: a long one is cut."""
    return message if len(message) <= 500 else f"{message[:500]}… [{len(message):,} characters]"


def _images(tool: str, images_json: str) -> tuple[Image, ...]:
    """The images a page tool showed, checked: known types, base64, bounded."""
    try:
        listed = json.loads(images_json)
    except ValueError:
        return ()
    out: list[Image] = []
    for item in listed if isinstance(listed, list) else []:
        if not isinstance(item, dict) or item.get("mediaType") not in IMAGE_TYPES:
            continue
        data = item.get("data")
        if not isinstance(data, str) or len(data) > MAX_IMAGE_BYTES * 4 // 3 + 4:
            continue
        try:
            base64.b64decode(data, validate=True)
        except ValueError:
            continue
        out.append(Image(path=f"(from the {tool} tool)", media_type=item["mediaType"], data=data))
    return tuple(out[:10])


def _bounded(output: str) -> str:
    """The page's output, cut like a built-in tool's (2000 lines or 50 KB): it goes into
    the conversation, and an oversized one would make every later model request fail."""
    cut = truncate_head(output)
    if not cut.truncated:
        return output
    return (f"{cut.text}\n\n[Output cut: the page tool returned {format_size(cut.total_bytes)} "
            f"in {cut.total_lines:,} lines; the first {format_size(cut.shown_bytes)} "
            f"({cut.shown_lines:,} whole lines) are shown.]")
