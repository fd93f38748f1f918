"""The scripted model: replays turns given up front. Used by tests and the offline demo.

Page config: ``{api: "scripted", turns: [{text?, toolCalls?: [{name, arguments}],
delayMs?, usage?}], prices?}``. Each model request consumes the next turn. ``delayMs``
spaces out the streamed text chunks (so a run can be cancelled mid-stream in a test or a demo).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from ..events import Tokens
from .base import Done, Failed, ModelEvent, ModelRequest, TextPart, ToolCallPart
from .configs import Prices


class _Conf(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ScriptedToolCall(_Conf):
    name: str
    arguments: dict[str, Any] | str = Field(
        default_factory=dict,
        description="An object, or raw JSON text (to script malformed arguments).",
    )


class ScriptedTurn(_Conf):
    text: str = ""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    delay_ms: float = Field(default=0, ge=0, description="Pause before each text chunk.")
    usage: Tokens | None = Field(default=None, description="The usage the turn reports "
                                 "(default none: a script has no tokens to count).")


class ScriptedConfig(_Conf):
    api: Literal["scripted"] = "scripted"
    turns: list[ScriptedTurn]
    context_window: int | None = Field(
        default=None, ge=100, description="Tokens; the history is compacted to fit.")
    vision: bool | None = Field(default=None, description="Given images (default: no).")
    prices: Prices | None = Field(default=None, description="USD per million tokens, for "
                                  "the turns' usage.")


KEPT_REQUESTS = 20
"""How many of the latest requests are kept for inspection: each holds the whole
history, so keeping them all would grow quadratically over a long session."""


class ScriptedModel:
    """Replays :class:`ScriptedTurn` s in order and records the latest requests it got."""

    def __init__(self, turns: list[ScriptedTurn]) -> None:
        self.turns = list(turns)
        self.requests: deque[ModelRequest] = deque(maxlen=KEPT_REQUESTS)
        self._calls = 0
        self._count = 0

    @classmethod
    def from_config(cls, config: ScriptedConfig) -> ScriptedModel:
        return cls(config.turns)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.purpose == "summary":
            # Compaction asks for a summary: answered here, without consuming a turn.
            asked = sum(len(getattr(m, "text", "")) for m in request.messages)
            yield TextPart(f"Summary by the scripted model of {asked} characters of "
                           "conversation.")
            yield Done("stop")
            return
        self.requests.append(request)
        self._count += 1
        if not self.turns:
            yield Failed(
                f"the scripted model has no turn left for request {self._count}; "
                "add another entry to model.turns",
                code="script_exhausted",
            )
            return
        turn = self.turns.pop(0)
        for chunk in re.findall(r"\S*\s*", turn.text):
            if not chunk:
                continue
            await asyncio.sleep(turn.delay_ms / 1000)
            yield TextPart(chunk)
        for call in turn.tool_calls:
            self._calls += 1
            args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            yield ToolCallPart(id=f"call_{self._calls}", name=call.name, arguments=args)
        await asyncio.sleep(0)
        yield Done("tool_calls" if turn.tool_calls else "stop", turn.usage)
