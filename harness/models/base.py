"""The one model interface.

A model turns a :class:`ModelRequest` into a stream of :data:`ModelEvent`. Contract:
once called, ``stream`` **never raises** (except ``asyncio.CancelledError`` when the
run is cancelled); a failure is the stream's last event, :class:`Failed`. The stream
always ends with exactly one :class:`Done` or :class:`Failed`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..events import Tokens
from ..messages import Message


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    system: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    # "summary": the harness asks for a summary of older turns (compaction); the
    # scripted model answers those itself instead of consuming a turn.
    purpose: Literal["turn", "summary"] = "turn"
    # At most this many output tokens (what a budget leaves): the provider's max_tokens
    # is lowered to it. None: the model's own setting.
    max_output_tokens: int | None = None


@dataclass(frozen=True)
class TextPart:
    """A piece of assistant text."""

    delta: str


@dataclass(frozen=True)
class ReasoningPart:
    """A piece of the model's reasoning ("thinking"), when the provider sends it."""

    delta: str


@dataclass(frozen=True)
class ToolCallPart:
    """A complete tool call; ``arguments`` is raw JSON text, validated by the loop."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Done:
    stop_reason: Literal["stop", "tool_calls"]
    usage: Tokens | None = None


@dataclass(frozen=True)
class Failed:
    """The model could not answer; ``message`` says why and what to do."""

    message: str
    code: str = "model_error"
    usage: Tokens | None = None
    """What the provider reported before the failure (it is spent all the same)."""


ModelEvent = TextPart | ReasoningPart | ToolCallPart | Done | Failed


class Model(Protocol):
    """Anything that can stream an answer to a request."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
