"""The page's ``model`` options for the HTTP providers, kept apart from the adapters so
that validating the options does not import them (the adapters load on first use).

:data:`WIRE_APIS` is the one definition of where each wire API's requests go and how
its key is sent. The adapters build their requests from it, and the page, which keeps
the key and adds it, imports the same table as ``embed/page/model-apis.mjs``, generated
from it (``pyharness schema --write``; a test fails when it is stale)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


@dataclass(frozen=True)
class WireApi:
    """Where one wire API's requests go and how the key is sent: ``POST``
    ``base_url`` (trailing slashes dropped) + ``path``, the key in ``key_header`` as
    ``key_prefix`` + key."""

    base_url: str
    path: str
    key_header: str
    key_prefix: str


WIRE_APIS: dict[str, WireApi] = {
    "openai-chat": WireApi("https://api.openai.com/v1", "/chat/completions",
                           "authorization", "Bearer "),
    "anthropic-messages": WireApi("https://api.anthropic.com/v1", "/messages",
                                  "x-api-key", ""),
}


def endpoint(api: str, base_url: str) -> str:
    """The URL every request of the wire API ``api`` goes to."""
    return base_url.rstrip("/") + WIRE_APIS[api].path


def key_headers(api: str, api_key: str | None) -> dict[str, str]:
    """The header that carries the key (none without one)."""
    wire = WIRE_APIS[api]
    return {wire.key_header: wire.key_prefix + api_key} if api_key else {}


class Prices(BaseModel):
    """``model.prices``: USD per million tokens, for the cost in usage and ``budget.cost``.
    A cache price left out is not guessed: a response with tokens of that kind has no
    cost (null)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    input: float = Field(ge=0, le=10_000, description="Uncached input tokens.")
    output: float = Field(ge=0, le=10_000, description="Output tokens (reasoning included).")
    cache_read: float | None = Field(default=None, ge=0, le=10_000,
                                     description="Input tokens read from the prompt cache.")
    cache_write: float | None = Field(default=None, ge=0, le=10_000,
                                      description="Input tokens written to the prompt cache.")


class ProviderConfig(BaseModel):
    """Options shared by every wire API."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    base_url: str
    api_key: str | None = None
    model: str
    headers: dict[str, str] = Field(default_factory=dict, description="Extra headers.")
    temperature: float | None = Field(default=None, ge=0)
    max_retries: int = Field(default=3, ge=0, le=10)
    idle_timeout_ms: int = Field(default=60000, ge=1)
    context_window: int | None = Field(
        default=None, ge=1000, description="Tokens the model takes in; default by model name "
        "(harness/compaction.py). The history is compacted to fit.")
    vision: bool | None = Field(
        default=None, description="The model takes images (attachments, read of an image "
        "file); default by model name (harness/images.py).")
    prices: Prices | None = Field(
        default=None, description="USD per million tokens, for usage's cost and budget.cost; "
        "none: cost is null (no default prices are built in).")


class OpenAIChatConfig(ProviderConfig):
    api: Literal["openai-chat"] = "openai-chat"
    base_url: str = WIRE_APIS["openai-chat"].base_url
    api_key: str | None = Field(default=None, description="Sent as a Bearer token.")
    max_tokens: int | None = Field(default=None, ge=1)


class AnthropicMessagesConfig(ProviderConfig):
    api: Literal["anthropic-messages"] = "anthropic-messages"
    base_url: str = WIRE_APIS["anthropic-messages"].base_url
    api_key: str | None = Field(default=None, description="Sent as x-api-key.")
    max_tokens: int = Field(default=4096, ge=1)
    thinking_budget: int | None = Field(
        default=None, ge=1024, description="Enables extended thinking with this many "
        "tokens (must be below maxTokens).")
