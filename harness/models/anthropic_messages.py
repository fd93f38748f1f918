"""The ``anthropic-messages`` adapter: the Anthropic Messages wire API, streamed.

Page config: ``{api: "anthropic-messages", model, baseUrl?, apiKey?, headers?,
maxTokens? (4096), temperature?, thinkingBudget?, maxRetries?, idleTimeoutMs?}``.

Translation of the history:

- The system prompt goes in the top-level ``system`` field.
- Messages of the same role in a row are merged into one (the API wants turns to
  alternate): consecutive tool results become ``tool_result`` blocks of ONE user
  message (``is_error`` kept), followed by the user's text if a prompt came next.
- An assistant message is its text block (if any) plus one ``tool_use`` block per call;
  ``input`` is the parsed arguments. Arguments that are not a JSON object (the model
  produced malformed JSON; the loop answered with an error result) are sent as ``{}``,
  since the API requires an object there. Empty text blocks are left out (rejected).

Extended thinking (``thinkingBudget``): thinking deltas stream as reasoning. For a
tool-use continuation the API wants the previous turn's thinking blocks back, signatures
included, and the neutral history has no place for them. So this adapter keeps them
itself, keyed by the turn's tool-call ids, for the last 64 such turns of this model
instance. Limitation: after a restart (or for older turns) they are gone; when the last
assistant turn has tool calls and its blocks are not known, that request is sent
without ``thinking`` so it still succeeds, and thinking resumes on the next prompt.

Usage: the neutral ``input_tokens`` counts cache reads and writes too (the wire's
``input_tokens`` is the uncached part); they are also given apart. Thinking tokens are
part of ``output_tokens`` and not reported apart. A budget's ``max_output_tokens``
lowers ``max_tokens`` (and the thinking budget below it, or no thinking when under 1024).
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import Tokens
from ..limits import MAX_TOOL_ARGUMENTS_CHARS, loads_bounded
from ..messages import AssistantMessage, Image, Message, ToolResult, UserMessage
from ..transport import HttpRequest, Transport
from .base import Done, Failed, ModelEvent, ModelRequest, ReasoningPart, TextPart, ToolCallPart
from .configs import AnthropicMessagesConfig, endpoint, key_headers
from .http_model import (
    Backoff,
    HttpModel,
    Sleep,
    json_body,
    parse_event_json,
    stream_failure,
)
from .sse import SseEvent

ANTHROPIC_VERSION = "2023-06-01"
_THINKING_KEPT = 64

Blocks = list[dict[str, Any]]


class AnthropicMessagesModel(HttpModel):
    """Streams answers from a Messages endpoint (``POST {baseUrl}/messages``)."""

    config: AnthropicMessagesConfig

    def __init__(
        self,
        config: AnthropicMessagesConfig,
        transport: Transport,
        sleep: Sleep = asyncio.sleep,
        backoff: Backoff | None = None,
    ) -> None:
        super().__init__(config, transport, sleep, backoff)
        # First tool-call id of a turn -> that turn's thinking blocks (see module doc).
        self._thinking: OrderedDict[str, Blocks] = OrderedDict()

    def decoder(self, host: str) -> _Decoder:
        return _Decoder(host, self._keep_thinking)

    def build_request(self, request: ModelRequest) -> HttpRequest:
        """The HTTP request for one model request (public for tests and debugging)."""
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "max_tokens": min(config.max_tokens, request.max_output_tokens or config.max_tokens),
            "messages": to_wire_messages(request.messages, self._thinking),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description,
                              "input_schema": t.parameters} for t in request.tools]
        if config.temperature is not None:
            body["temperature"] = config.temperature
        thinking = config.thinking_budget
        if thinking is not None and self._thinking_possible(request.messages):
            # Below max_tokens, at least 1024 (the API's rules); none when a budget left
            # too little room.
            thinking = min(thinking, body["max_tokens"] - 1)
            if thinking >= 1024:
                body["thinking"] = {"type": "enabled", "budget_tokens": thinking}
        headers = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
            # Required for calls from a web page; harmless elsewhere.
            "anthropic-dangerous-direct-browser-access": "true",
            **key_headers(config.api, config.api_key),
        }
        headers.update({k.lower(): v for k, v in config.headers.items()})
        return HttpRequest("POST", endpoint(config.api, config.base_url), headers, json_body(body))

    def _thinking_possible(self, messages: list[Message]) -> bool:
        """False when the last assistant turn used tools and its thinking blocks are
        unknown: the API would reject the request with thinking enabled."""
        for message in reversed(messages):
            if isinstance(message, AssistantMessage):
                return not message.tool_calls or message.tool_calls[0].id in self._thinking
        return True

    def _keep_thinking(self, first_call_id: str, blocks: Blocks) -> None:
        self._thinking[first_call_id] = blocks
        while len(self._thinking) > _THINKING_KEPT:
            self._thinking.popitem(last=False)


def to_wire_messages(
    messages: list[Message], thinking: Mapping[str, Blocks] | None = None
) -> list[dict[str, Any]]:
    """The history as Messages API turns (see the module doc for the rules)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _to_blocks(message, thinking or {})
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _to_blocks(message: Message, thinking: Mapping[str, Blocks]) -> tuple[str, Blocks]:
    if isinstance(message, UserMessage):
        images = [_image_block(i) for i in message.images]
        return "user", [*images, {"type": "text", "text": message.text}] if message.text else images
    if isinstance(message, ToolResult):
        content: str | Blocks = message.output
        if message.images:
            content = [{"type": "text", "text": message.output},
                       *(_image_block(i) for i in message.images)]
        return "user", [{"type": "tool_result", "tool_use_id": message.call_id,
                         "content": content, "is_error": message.is_error}]
    blocks: Blocks = []
    if message.tool_calls:
        blocks.extend(thinking.get(message.tool_calls[0].id, []))
    if message.text:
        blocks.append({"type": "text", "text": message.text})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name,
                       "input": _arguments_object(call.arguments)})
    return "assistant", blocks


def _image_block(image: Image) -> dict[str, Any]:
    return {"type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.data}}


def _arguments_object(arguments: str) -> dict[str, Any]:
    try:  # bounded: the arguments are the model's, and the parser recurses
        value = loads_bounded(arguments, "tool arguments", MAX_TOOL_ARGUMENTS_CHARS)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class _Block:
    type: str
    id: str = ""
    name: str = ""
    input: Any = None
    parts: list[str] = field(default_factory=list)  # partial JSON, or thinking text
    signature: str = ""
    data: str = ""  # a redacted_thinking block's payload


class _Decoder:
    """One response's events → model events; hands completed thinking to ``keep``."""

    def __init__(self, host: str, keep: Callable[[str, Blocks], None]) -> None:
        self.host = host
        self.keep = keep
        self.blocks: dict[int, _Block] = {}
        self.done_blocks: list[_Block] = []
        self.tool_calls = 0
        self.counts: dict[str, int] = {}  # the wire's usage fields, as last reported

    def feed(self, event: SseEvent) -> list[ModelEvent]:
        data = parse_event_json(event, self.host)
        if isinstance(data, Failed):
            return [data]
        kind = data.get("type") or event.event
        if kind == "message_start":
            self._count((data.get("message") or {}).get("usage") or {})
        elif kind == "content_block_start":
            return self._start_block(data.get("index", 0), data.get("content_block") or {})
        elif kind == "content_block_delta":
            return self._delta(self.blocks.get(data.get("index", 0)), data.get("delta") or {})
        elif kind == "content_block_stop":
            return self._stop_block(data.get("index", 0))
        elif kind == "message_delta":
            self._count(data.get("usage") or {})
        elif kind == "message_stop":
            return [self._done()]
        elif kind == "error":
            return [stream_failure(data.get("error"), self.host)]
        return []  # ping, and event types added to the API later

    def end(self) -> ModelEvent:
        return Failed(f"the stream from {self.host} ended early (no message_stop); try "
                      "again", "stream_error")

    def _count(self, usage: dict[str, Any]) -> None:
        """Usage of message_start, then of message_delta (cumulative: each count it
        has replaces the last). ``input_tokens`` is the uncached part."""
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens",
                    "output_tokens"):
            if isinstance(usage.get(key), int) and usage[key] >= 0:
                self.counts[key] = usage[key]

    @property
    def usage(self) -> Tokens | None:
        counts = self.counts
        if not counts:
            return None
        read = counts.get("cache_read_input_tokens", 0)
        written = counts.get("cache_creation_input_tokens", 0)
        return Tokens(input_tokens=counts.get("input_tokens", 0) + read + written,
                      output_tokens=counts.get("output_tokens", 0),
                      cache_read_tokens=read, cache_write_tokens=written)

    def _start_block(self, index: int, start: dict[str, Any]) -> list[ModelEvent]:
        block = _Block(type=str(start.get("type")), id=start.get("id") or "",
                       name=start.get("name") or "", input=start.get("input"),
                       data=start.get("data") or "")
        self.blocks[index] = block
        if block.type == "text" and start.get("text"):
            return [TextPart(start["text"])]
        if block.type == "thinking" and start.get("thinking"):
            block.parts.append(start["thinking"])
            return [ReasoningPart(start["thinking"])]
        return []

    def _delta(self, block: _Block | None, delta: dict[str, Any]) -> list[ModelEvent]:
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextPart(delta["text"])]
        if block is None:
            return []
        if kind == "input_json_delta":
            block.parts.append(delta.get("partial_json") or "")
        elif kind == "thinking_delta" and delta.get("thinking"):
            block.parts.append(delta["thinking"])
            return [ReasoningPart(delta["thinking"])]
        elif kind == "signature_delta":
            block.signature += delta.get("signature") or ""
        return []

    def _stop_block(self, index: int) -> list[ModelEvent]:
        block = self.blocks.pop(index, None)
        if block is None:
            return []
        self.done_blocks.append(block)
        if block.type != "tool_use":
            return []
        self.tool_calls += 1
        # No input_json_delta at all means the input came whole in content_block_start.
        arguments = "".join(block.parts) or json.dumps(block.input or {})
        return [ToolCallPart(id=block.id, name=block.name, arguments=arguments)]

    def _done(self) -> Done:
        thinking: Blocks = []
        for block in self.done_blocks:
            if block.type == "thinking":
                thinking.append({"type": "thinking", "thinking": "".join(block.parts),
                                 "signature": block.signature})
            elif block.type == "redacted_thinking":
                thinking.append({"type": "redacted_thinking", "data": block.data})
        first_call = next((b.id for b in self.done_blocks if b.type == "tool_use"), None)
        if thinking and first_call:
            self.keep(first_call, thinking)
        return Done("tool_calls" if self.tool_calls else "stop", self.usage)

