"""Models by wire API, behind the one interface in :mod:`.base`."""

from __future__ import annotations

from ..transport import Transport
from .base import Model
from .configs import AnthropicMessagesConfig, OpenAIChatConfig
from .scripted import ScriptedConfig, ScriptedModel


def build_model(config: ScriptedConfig | OpenAIChatConfig | AnthropicMessagesConfig,
                transport: Transport) -> Model:
    """The model the page asked for (``model.api``), sending through ``transport``.
    The HTTP adapters are imported here, on first use, to keep them out of the boot."""
    match config:
        case OpenAIChatConfig():
            from .openai_chat import OpenAIChatModel

            return OpenAIChatModel(config, transport)
        case AnthropicMessagesConfig():
            from .anthropic_messages import AnthropicMessagesModel

            return AnthropicMessagesModel(config, transport)
        case ScriptedConfig():
            return ScriptedModel.from_config(config)
