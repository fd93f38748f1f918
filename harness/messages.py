"""The conversation history, in a provider-neutral form the model adapters translate."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Message(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built at the first run, not at boot


class ToolCall(_Message):
    id: str
    name: str
    arguments: str = Field(description="The raw JSON text the model produced.")


class Image(_Message):
    """An image the model sees (harness/images.py): where it is in the workspace, its
    type, and its bytes in base64."""

    path: str
    media_type: str
    data: str


class UserMessage(_Message):
    role: Literal["user"] = "user"
    text: str
    images: list[Image] = Field(default_factory=list)


class AssistantMessage(_Message):
    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolResult(_Message):
    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    output: str
    is_error: bool = False
    images: list[Image] = Field(default_factory=list)  # what the tool showed (read)


Message = UserMessage | AssistantMessage | ToolResult
