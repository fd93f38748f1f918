"""The ``openai-chat`` adapter: the OpenAI Chat Completions wire API, streamed.

Any server that speaks it works with a ``baseUrl``: OpenAI, OpenRouter, DeepSeek,
Groq, Together, vLLM, llama.cpp, Ollama, LM Studio, ...

Page config: ``{api: "openai-chat", model, baseUrl?, apiKey?, headers?, maxTokens?,
temperature?, maxRetries?, idleTimeoutMs?}``.

Choices made where servers differ:

- Reasoning arrives as ``delta.reasoning_content`` (DeepSeek, vLLM, llama.cpp) or
  ``delta.reasoning`` (OpenRouter); both become :class:`ReasoningPart`.
- Tool calls are assembled by their ``index``; a call is only yielded, complete, when
  the choice finishes (or the stream ends). A call without an id gets a random ``call_...`` one;
  empty arguments become ``"{}"``; arguments that are not valid JSON are passed through
  as they came (the loop answers them with an error result) and are sent back verbatim
  in later requests, since the wire format carries them as a string.
- Usage comes from the final usage chunk: ``prompt_tokens`` (cached ones included,
  also given apart from ``prompt_tokens_details.cached_tokens``), ``completion_tokens``
  (reasoning included, apart from ``completion_tokens_details.reasoning_tokens``).
- ``maxTokens`` (or what a budget leaves, if lower) is sent as ``max_tokens``, which
  every compatible server accepts;
  OpenAI's reasoning models want ``max_completion_tokens`` instead and answer 400 with
  a message that says so.
- Every ``finish_reason`` (``stop``, ``length``, ``content_filter``, ...) ends the turn
  normally; the stop reason is ``tool_calls`` when the answer holds tool calls.
- The stream is complete at ``data: [DONE]``, or at the end of the body once a
  ``finish_reason`` arrived (some servers omit ``[DONE]``); otherwise it ended early.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..events import Tokens
from ..messages import AssistantMessage, Image, Message, ToolResult, UserMessage
from ..transport import HttpRequest
from .base import Done, Failed, ModelEvent, ModelRequest, ReasoningPart, TextPart, ToolCallPart
from .configs import OpenAIChatConfig, endpoint, key_headers
from .http_model import (
    HttpModel,
    json_body,
    parse_event_json,
    stream_failure,
)
from .sse import SseEvent


class OpenAIChatModel(HttpModel):
    """Streams answers from a Chat Completions endpoint (``POST {baseUrl}/chat/completions``)."""

    config: OpenAIChatConfig

    def decoder(self, host: str) -> _Decoder:
        return _Decoder(host)

    def build_request(self, request: ModelRequest) -> HttpRequest:
        """The HTTP request for one model request (public for tests and debugging)."""
        config = self.config
        body: dict[str, Any] = {
            "model": config.model,
            "messages": to_wire_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in request.tools
            ]
        limits = [n for n in (config.max_tokens, request.max_output_tokens) if n is not None]
        if limits:
            body["max_tokens"] = min(limits)
        if config.temperature is not None:
            body["temperature"] = config.temperature
        headers = {"content-type": "application/json", "accept": "text/event-stream",
                   **key_headers(config.api, config.api_key)}
        headers.update({k.lower(): v for k, v in config.headers.items()})
        return HttpRequest("POST", endpoint(config.api, config.base_url), headers, json_body(body))


def to_wire_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The history as Chat Completions messages (a system message first, if any)."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    shown: list[dict[str, Any]] = []  # images of the tool results since the last turn
    for message in messages:
        if shown and not isinstance(message, ToolResult):
            out.append({"role": "user", "content": shown})
            shown = []
        if isinstance(message, UserMessage):
            if message.images:
                out.append({"role": "user", "content": [{"type": "text", "text": message.text},
                                                        *map(_image_part, message.images)]})
            else:
                out.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            wire: dict[str, Any] = {"role": "assistant"}
            # The spec allows null content only next to tool calls.
            wire["content"] = message.text if message.text or not message.tool_calls else None
            if message.tool_calls:
                wire["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": c.arguments}}
                    for c in message.tool_calls
                ]
            out.append(wire)
        elif isinstance(message, ToolResult):
            # The wire format has no error flag: the output text says it.
            out.append({"role": "tool", "tool_call_id": message.call_id,
                        "content": message.output})
            if message.images:
                # A tool message holds text only: its images follow in a user message,
                # after the turn's tool messages.
                shown.append({"type": "text", "text": f"The images {message.name} "
                              f"({message.call_id}) returned:"})
                shown.extend(map(_image_part, message.images))
    if shown:
        out.append({"role": "user", "content": shown})
    return out


def _image_part(image: Image) -> dict[str, Any]:
    return {"type": "image_url",
            "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class _Decoder:
    """One response's chunks → model events (see the module doc for the rules)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.calls: dict[int, _PartialCall] = {}
        self.flushed_calls = 0
        self.finished = False
        self.usage: Tokens | None = None

    def feed(self, event: SseEvent) -> list[ModelEvent]:
        if event.data.strip() == "[DONE]":
            return [*self._flush_calls(), self._done()]
        data = parse_event_json(event, self.host)
        if isinstance(data, Failed):
            return [data]
        if data.get("error"):
            return [stream_failure(data["error"], self.host)]
        usage = data.get("usage")
        if isinstance(usage, dict):
            self.usage = _tokens(usage)
        out: list[ModelEvent] = []
        for choice in data.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue  # we ask for one choice; ignore any other
            self._read_delta(choice.get("delta") or {}, out)
            if choice.get("finish_reason"):
                self.finished = True
                out.extend(self._flush_calls())
        return out

    def end(self) -> ModelEvent:
        if self.finished:  # some servers end the body without [DONE]
            return self._done()
        return Failed(f"the stream from {self.host} ended early (no finish_reason, no "
                      "[DONE]); try again", "stream_error")

    def _read_delta(self, delta: dict[str, Any], out: list[ModelEvent]) -> None:
        for key in ("reasoning_content", "reasoning"):
            if isinstance(delta.get(key), str) and delta[key]:
                out.append(ReasoningPart(delta[key]))
                break
        if isinstance(delta.get("content"), str) and delta["content"]:
            out.append(TextPart(delta["content"]))
        for piece in delta.get("tool_calls") or []:
            self._read_tool_delta(piece)
        if isinstance(delta.get("function_call"), dict):  # the legacy one-call format
            self._read_tool_delta({"index": 0, "function": delta["function_call"]})

    def _read_tool_delta(self, piece: dict[str, Any]) -> None:
        index = piece.get("index")
        if not isinstance(index, int):
            # Without an index (some servers): a new id starts a call, else continue one.
            known = {c.id for c in self.calls.values()}
            is_new = not self.calls or (piece.get("id") and piece["id"] not in known)
            index = len(self.calls) if is_new else max(self.calls)
        call = self.calls.setdefault(index, _PartialCall())
        function = piece.get("function") or {}
        # id and name come once; some servers repeat them in every delta, so never append.
        call.id = call.id or piece.get("id") or ""
        call.name = call.name or function.get("name") or ""
        if isinstance(function.get("arguments"), str):
            call.arguments.append(function["arguments"])

    def _flush_calls(self) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        for index in sorted(self.calls):
            call = self.calls[index]
            self.flushed_calls += 1
            # A missing id must still be unique in the history: results refer to it.
            call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            out.append(ToolCallPart(id=call_id, name=call.name,
                                    arguments="".join(call.arguments) or "{}"))
        self.calls.clear()
        return out

    def _done(self) -> Done:
        return Done("tool_calls" if self.flushed_calls else "stop", self.usage)



def _tokens(usage: dict[str, Any]) -> Tokens:
    """The usage chunk (``stream_options.include_usage``): cached and reasoning tokens
    are in its ``*_details``, as parts of the prompt and completion counts."""

    def count(value: Any) -> int:
        return value if isinstance(value, int) and value > 0 else 0

    prompt = usage.get("prompt_tokens_details")
    completion = usage.get("completion_tokens_details")
    prompt = prompt if isinstance(prompt, dict) else {}
    completion = completion if isinstance(completion, dict) else {}
    return Tokens(input_tokens=count(usage.get("prompt_tokens")),
                  output_tokens=count(usage.get("completion_tokens")),
                  cache_read_tokens=count(prompt.get("cached_tokens")),
                  reasoning_tokens=count(completion.get("reasoning_tokens")))
