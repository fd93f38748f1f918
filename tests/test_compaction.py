"""Long conversations (harness/compaction.py): requests stay inside the context window,
the history stays valid, the provider's "too long" triggers one compaction and a retry."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from harness.compaction import SUMMARY_PREFIX, default_window, estimate, is_context_error
from harness.messages import AssistantMessage, ToolResult, UserMessage
from harness.models.base import Done, Failed, ModelEvent, ModelRequest, TextPart
from harness.runtime.native import NativeRuntime
from harness.session import Session


def session_with(tmp_path: Path, turns: list[dict[str, Any]],
                 window: int) -> tuple[Session, NativeRuntime]:
    runtime = NativeRuntime(str(tmp_path / "w"))
    config = {"model": {"api": "scripted", "turns": turns, "contextWindow": window}}
    return Session.from_options(json.dumps(config), runtime), runtime


def run(session: Session, run_id: str, text: str) -> Any:
    async def go() -> Any:
        return await session.prompt(run_id, text)
    return asyncio.run(go())


def valid(history: list[Any]) -> bool:
    """Every tool result follows the assistant message that called it."""
    called: set[str] = set()
    for m in history:
        if isinstance(m, AssistantMessage):
            called |= {c.id for c in m.tool_calls}
        elif isinstance(m, ToolResult) and m.call_id not in called:
            return False
    return True


def test_two_hundred_large_tool_outputs_stay_inside_a_small_window(tmp_path: Path) -> None:
    window = 12_000  # tokens; each output is ~5,000 tokens
    read = [{"name": "read", "arguments": {"path": f"f{i % 5}.txt"}} for i in range(200)]
    turns = [{"text": f"step {i}", "toolCalls": [read[i]]} for i in range(200)]
    turns.append({"text": "all read"})
    session, runtime = session_with(tmp_path, turns, window)
    for i in range(5):
        (tmp_path / "w" / f"f{i}.txt").write_text(f"file {i} /work/src/mod{i}.py\n" + "x" * 20_000)
    seen: list[int] = []
    model = session.agent.model
    original = model.stream

    def recording(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.purpose == "turn":
            seen.append(estimate(request.system, request.messages, request.tools))
        return original(request)

    model.stream = recording  # type: ignore[method-assign]
    session.agent.max_steps = 1000
    result = run(session, "r1", "read everything")
    assert result.text == "all read" and result.stop_reason == "stop"
    assert len(seen) == 201 and max(seen) <= window, max(seen)
    events = runtime.messages
    compactions = [e for e in events if e.get("type") == "compaction"]
    assert compactions and all(c["afterTokens"] < c["beforeTokens"] for c in compactions)
    assert any(c["summarizedMessages"] > 0 for c in compactions)
    ends = [e for e in events if e.get("type") == "tool_end"]
    assert len(ends) == 200 and all(len(e["output"]) > 20_000 for e in ends)  # the page sees all
    history = session.conversations.store.current.history
    assert valid(history)
    assert isinstance(history[0], UserMessage) and history[0].text.startswith(SUMMARY_PREFIX)
    assert "/work/src/mod" in history[0].text  # file paths survive the summary


class TooLongOnce:
    """Refuses the first long request like a provider does, then answers."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.requests.append(request)
        if request.purpose == "summary":
            yield TextPart("summary")
            yield Done("stop")
            return
        if len([r for r in self.requests if r.purpose == "turn"]) == 1:
            yield Failed("400: This model's maximum context length is 8192 tokens. However, "
                         "your messages resulted in 9001 tokens.", code="model_error")
            return
        yield TextPart("fits now")
        yield Done("stop")


def test_a_provider_that_says_too_long_gets_one_compaction_and_a_retry(tmp_path: Path) -> None:
    session, runtime = session_with(tmp_path, [], 100_000)
    session.agent.context_budget = None  # no window known: only the provider's word
    model = TooLongOnce()
    session.agent.model = model  # type: ignore[assignment]
    history = session.conversations.store.current.history
    for i in range(10):
        history.append(UserMessage(text=f"question {i} " + "y" * 4000))
        history.append(AssistantMessage(text=f"answer {i}"))
    result = run(session, "r1", "next")
    assert result.text == "fits now" and result.stop_reason == "stop"
    compaction = [e for e in runtime.messages if e.get("type") == "compaction"]
    assert len(compaction) == 1 and compaction[0]["reason"] == "provider"
    turns = [r for r in model.requests if r.purpose == "turn"]
    assert len(turns) == 2
    assert estimate("", turns[1].messages, []) < estimate("", turns[0].messages, [])


def test_context_errors_and_default_windows() -> None:
    assert is_context_error("context_length_exceeded")
    assert is_context_error("prompt is too long: 210000 tokens > 200000 maximum")
    assert not is_context_error("invalid api key")
    assert default_window("gpt-4.1-mini") == 1_047_576
    assert default_window("claude-sonnet-4-5") == 200_000
    assert default_window("org/qwen2.5-coder") == 32_768
    assert default_window("something-new") == 128_000


def test_compacting_a_long_history_walks_it_a_few_times_not_once_per_message(
        monkeypatch: Any) -> None:
    """Shortening the outputs and finding the cut keep running totals: counting one
    message at a time, a compaction of n messages costs a few n, not n squared (the
    estimate of the whole history per message made a 1,000-message compaction take
    about a million counts)."""
    from harness import compaction

    counted = 0
    original = compaction.message_chars

    def counting(m: Any) -> int:
        nonlocal counted
        counted += 1
        return original(m)

    monkeypatch.setattr(compaction, "message_chars", counting)
    history: list[Any] = []
    for i in range(500):
        history.append(AssistantMessage(text=f"step {i}", tool_calls=[]))
        history.append(UserMessage(text="y" * 3_000 if i % 2 else "short"))
    history += [ToolResult(call_id="c", name="read", output="z" * 9_000) for _ in range(4)]

    class Summary:
        async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
            yield TextPart("what happened")
            yield Done("stop")

    n = len(history)
    done = asyncio.run(compaction.compact(history, "system", [], Summary(), budget=20_000))
    assert done is not None and done.summarized_messages > 0 and done.shortened_outputs == 0
    assert estimate("system", history, []) <= 20_000
    assert counted < 8 * n, counted  # n squared would be 500,000
