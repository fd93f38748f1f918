"""Usage as the providers send it, from recorded streams (fixtures/, captured from
tooling.provider_server): OpenAI's final usage chunk (``stream_options.include_usage``)
with its cached and reasoning details, Anthropic's ``message_start`` and cumulative
``message_delta`` usage with cache reads and writes; then priced. No sockets: runs on
CPython and inside Pyodide."""

import json
from pathlib import Path

import pytest

from harness.budget import price
from harness.events import Tokens
from harness.models.anthropic_messages import AnthropicMessagesModel
from harness.models.anthropic_messages import _Decoder as AnthropicDecoder
from harness.models.base import Done, ModelRequest
from harness.models.configs import AnthropicMessagesConfig, OpenAIChatConfig, Prices
from harness.models.openai_chat import OpenAIChatModel
from harness.models.openai_chat import _Decoder as OpenAIDecoder
from harness.models.sse import SseParser
from harness.transport import Transport

FIXTURES = Path(__file__).parent / "fixtures"


def decode(name, decoder):
    parser = SseParser()
    out = [e for sse in parser.feed((FIXTURES / name).read_bytes()) for e in decoder.feed(sse)]
    parser.close()
    return out


@pytest.mark.parametrize(("name", "decoder", "tokens"), [
    ("openai_usage.sse", lambda: OpenAIDecoder("h"),
     Tokens(input_tokens=2006, output_tokens=300, cache_read_tokens=1920, reasoning_tokens=128)),
    ("anthropic_usage.sse", lambda: AnthropicDecoder("h", lambda *_: None),
     Tokens(input_tokens=2006, output_tokens=300, cache_read_tokens=1500,
            cache_write_tokens=400)),
    # the plain forms: no details; Anthropic's message_delta with output_tokens only
    ("openai_chat.sse", lambda: OpenAIDecoder("h"), Tokens(input_tokens=10, output_tokens=5)),
    ("anthropic_messages.sse", lambda: AnthropicDecoder("h", lambda *_: None),
     Tokens(input_tokens=10, output_tokens=5)),
])
def test_recorded_usage(name, decoder, tokens):
    events = decode(name, decoder())
    done = [e for e in events if isinstance(e, Done)]
    assert len(done) == 1 and done[0].usage == tokens


def test_recorded_usage_priced():
    prices = Prices(input=3, output=15, cache_read=0.3, cache_write=3.75)
    anthropic = decode("anthropic_usage.sse", AnthropicDecoder("h", lambda *_: None))[-1]
    assert price(anthropic.usage, prices) == pytest.approx(
        (106 * 3 + 1500 * 0.3 + 400 * 3.75 + 300 * 15) / 1e6)
    openai = decode("openai_usage.sse", OpenAIDecoder("h"))[-1]
    assert price(openai.usage, Prices(input=3, output=15)) is None  # cached, unpriced
    assert price(openai.usage, Prices(input=2, output=8, cache_read=0.5)) == pytest.approx(
        (86 * 2 + 1920 * 0.5 + 300 * 8) / 1e6)


class _NoTransport(Transport):
    async def send(self, request):  # pragma: no cover - never sent
        raise AssertionError("not sent")


def body(model, request):
    return json.loads(model.build_request(request).body)


def test_a_budgets_max_output_tokens_lowers_max_tokens():
    request = ModelRequest("sys", [], max_output_tokens=500)
    openai = OpenAIChatModel(OpenAIChatConfig(model="m"), _NoTransport())
    assert body(openai, request)["max_tokens"] == 500
    openai = OpenAIChatModel(OpenAIChatConfig(model="m", max_tokens=300), _NoTransport())
    assert body(openai, request)["max_tokens"] == 300
    plain = OpenAIChatModel(OpenAIChatConfig(model="m"), _NoTransport())
    assert "max_tokens" not in body(plain, ModelRequest("s", []))
    thinking = AnthropicMessagesConfig(model="m", max_tokens=8000, thinking_budget=4000)
    anthropic = AnthropicMessagesModel(thinking, _NoTransport())
    sent = body(anthropic, ModelRequest("s", [], max_output_tokens=2000))
    assert sent["max_tokens"] == 2000 and sent["thinking"]["budget_tokens"] == 1999
    sent = body(anthropic, ModelRequest("s", [], max_output_tokens=900))
    assert sent["max_tokens"] == 900 and "thinking" not in sent  # under 1024: none
    sent = body(anthropic, ModelRequest("s", []))
    assert sent["max_tokens"] == 8000 and sent["thinking"]["budget_tokens"] == 4000
