"""Checks on a conversation history shared by the fault and cancellation suites."""

from harness.messages import AssistantMessage, ToolResult, UserMessage


def consistent(history) -> bool:
    """Every tool call is answered exactly once, right after its assistant message (what
    a provider requires of the next request)."""
    assert isinstance(history[0], UserMessage)
    pending: list[str] = []
    for message in history:
        if isinstance(message, ToolResult):
            assert message.call_id in pending, message
            pending.remove(message.call_id)
            continue
        assert not pending, f"unanswered tool calls {pending} before {message}"
        if isinstance(message, AssistantMessage):
            pending = [c.id for c in message.tool_calls]
    assert not pending
    return True
