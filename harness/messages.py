"""The conversation history, in a provider-neutral form the model adapters translate."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str = Field(description="The raw JSON text the model produced.")


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    text: str


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)


class ToolResult(BaseModel):
    role: Literal["tool"] = "tool"
    call_id: str
    name: str
    output: str
    is_error: bool = False


Message = UserMessage | AssistantMessage | ToolResult
