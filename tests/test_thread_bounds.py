"""A long thread past its bounds (harness/threads.py): once the run marks (MAX_RUN_MARKS)
and the transcript (MAX_TRANSCRIPT_EVENTS) are full, each save still appends what the run
added, instead of writing the whole thread at every run (which made every prompt after
the 200th cost the length of the conversation), and what is read back is exactly the
thread, its oldest marks and events dropped as the bounds drop them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harness import threads
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.threads import Thread, ThreadStore

PROMPTS = 60


def test_a_thread_past_its_bounds_is_saved_by_appending(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "MAX_RUN_MARKS", 7)
    monkeypatch.setattr(threads, "MAX_TRANSCRIPT_EVENTS", 50)
    turns: list[dict[str, object]] = []
    for i in range(PROMPTS):
        turns += [{"text": f"writing {i}", "toolCalls": [
            {"name": "write", "arguments": {"path": "a.txt", "content": f"{i}\n"}}]},
            {"text": f"done {i}"}]
    runtime = NativeRuntime(str(tmp_path / "work"), threads=str(tmp_path / "threads"))
    session = Session.from_options(json.dumps({"model": {"api": "scripted", "turns": turns}}),
                                   runtime)
    store = session.conversations.store
    writes: list[str] = []
    original = store._save

    def counting(thread: Thread, whole: bool = False) -> None:
        before = thread.generation
        original(thread, whole)
        writes.append("whole" if thread.generation != before else "append")

    store._save = counting  # type: ignore[method-assign]

    async def run() -> None:
        for i in range(PROMPTS):
            result = await session.prompt(f"r{i}", f"prompt {i}")
            assert result.stop_reason == "stop", result

    asyncio.run(run())
    thread = store.current
    assert len(thread.runs) == 7 and thread.runs[-1][0] == f"r{PROMPTS - 1}"
    assert len(thread.transcript) == 50 and thread.transcript[-1]["type"] == "run_end"
    # run_start, tool_end, run_end a prompt; a whole write only when the journal outgrows
    # its bound (none here), not one a run once the bounds are full (53 before)
    assert len(writes) == 3 * PROMPTS
    assert writes.count("whole") <= 3, writes.count("whole")
    reread = ThreadStore(str(tmp_path / "threads")).get(thread.id)
    assert reread.dump() | {"generation": 0} == thread.dump() | {"generation": 0}
    assert [r for r, _ in reread.runs] == [f"r{i}" for i in range(PROMPTS - 7, PROMPTS)]


def test_a_text_event_grown_after_its_save_is_carried_when_older_ones_were_dropped(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The last event saved grows (merged text) while events before it are dropped: the
    journal line names it where it is now, and the replay gives the same transcript."""
    monkeypatch.setattr(threads, "MAX_TRANSCRIPT_EVENTS", 3)
    store = ThreadStore(str(tmp_path / "threads"))
    thread = store.current
    for n in range(3):
        thread.record({"type": "run_start", "runId": f"r{n}", "prompt": "p"})
    thread.record({"type": "text_delta", "runId": "r2", "delta": "he"})
    store.save(thread)  # whole (first save)
    thread.record({"type": "text_delta", "runId": "r2", "delta": "llo"})  # grows the saved one
    thread.record({"type": "run_end", "runId": "r2", "text": "hello"})  # drops r0's start
    generation = thread.generation
    store.save(thread)
    assert thread.generation == generation  # appended
    reread = ThreadStore(str(tmp_path / "threads")).get(thread.id)
    assert reread.transcript == thread.transcript
    assert [e["type"] for e in reread.transcript] == ["run_start", "text_delta", "run_end"]
    assert reread.transcript[1]["delta"] == "hello"
