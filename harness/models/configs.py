"""The page's ``model`` options for the HTTP providers, kept apart from the adapters so
that validating the options does not import them (the adapters load on first use)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


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


class OpenAIChatConfig(ProviderConfig):
    api: Literal["openai-chat"] = "openai-chat"
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = Field(default=None, description="Sent as a Bearer token.")
    max_tokens: int | None = Field(default=None, ge=1)


class AnthropicMessagesConfig(ProviderConfig):
    api: Literal["anthropic-messages"] = "anthropic-messages"
    base_url: str = "https://api.anthropic.com/v1"
    api_key: str | None = Field(default=None, description="Sent as x-api-key.")
    max_tokens: int = Field(default=4096, ge=1)
    thinking_budget: int | None = Field(
        default=None, ge=1024, description="Enables extended thinking with this many "
        "tokens (must be below maxTokens).")
