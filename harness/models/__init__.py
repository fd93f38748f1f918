"""Models by wire API, behind the one interface in :mod:`.base`."""

from __future__ import annotations

from ..transport import Transport
from .anthropic_messages import AnthropicMessagesConfig, AnthropicMessagesModel
from .base import Model
from .openai_chat import OpenAIChatConfig, OpenAIChatModel
from .scripted import ScriptedConfig, ScriptedModel


def build_model(config: ScriptedConfig | OpenAIChatConfig | AnthropicMessagesConfig,
                transport: Transport) -> Model:
    """The model the page asked for (``model.api``), sending through ``transport``."""
    match config:
        case OpenAIChatConfig():
            return OpenAIChatModel(config, transport)
        case AnthropicMessagesConfig():
            return AnthropicMessagesModel(config, transport)
        case ScriptedConfig():
            return ScriptedModel.from_config(config)
