"""Threads (harness/threads.py): conversations kept beside the workspace, continued after
a restart, repaired after a cut-off run, and the h.threads requests."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from harness.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.threads import INTERRUPTED, Conversations, Thread, ThreadStore


def boot(tmp_path: Path, turns: list[dict[str, Any]]) -> tuple[Session, Conversations]:
    """A session and its conversations, as the worker makes them (state in tmp_path)."""
    holder: dict[str, Conversations] = {}
    runtime = NativeRuntime(on_message=lambda m: holder["c"].observe(json.dumps(m)))
    config = json.dumps({"model": {"api": "scripted", "turns": turns}})
    session = Session.create(config, str(tmp_path / "work"), runtime)
    holder["c"] = Conversations(ThreadStore(str(tmp_path / "threads")), session.agent)
    return session, holder["c"]


def prompt(session: Session, conv: Conversations, run_id: str, text: str) -> Any:
    async def go() -> Any:
        conv.started(run_id)
        return await session.prompt(run_id, text)

    return asyncio.run(go())


def request(conv: Conversations, **fields: Any) -> Any:
    return json.loads(conv.request(json.dumps(fields)))


def test_a_thread_continues_after_a_restart(tmp_path: Path) -> None:
    session, conv = boot(tmp_path, [
        {"text": "listing", "toolCalls": [{"name": "ls", "arguments": {}}]}, {"text": "empty"}])
    assert prompt(session, conv, "r1", "what is here?").text == "empty"

    session, conv = boot(tmp_path, [{"text": "as I said"}])
    assert prompt(session, conv, "r2", "and now?").text == "as I said"
    request_ = session.agent.model.requests[-1]  # type: ignore[attr-defined]
    roles = [m.role for m in request_.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]
    assert request_.messages[0].text == "what is here?"
    events = request(conv, op="transcript")["value"]["events"]
    assert [e["type"] for e in events if e["type"] in ("run_start", "run_end")] == [
        "run_start", "run_end", "run_start", "run_end"]
    deltas = [e for e in events if e["type"] == "text_delta" and e["runId"] == "r1"]
    assert len(deltas) == 2 and deltas[1]["delta"] == "empty"  # merged per turn


def test_a_run_cut_off_is_repaired_when_loaded(tmp_path: Path) -> None:
    store_dir = tmp_path / "threads"
    store_dir.mkdir()
    thread = Thread({"id": "t1", "title": "cut", "history": [], "running": "r9",
                     "transcript": [{"type": "run_start", "runId": "r9", "seq": 0}]})
    thread.history = [UserMessage(text="go"), AssistantMessage(
        text="", tool_calls=[ToolCall(id="c1", name="ls", arguments="{}")])]
    (store_dir / "t1.json").write_text(json.dumps(thread.dump()))
    loaded = ThreadStore(str(store_dir)).current
    assert isinstance(loaded.history[-1], ToolResult)
    assert loaded.history[-1].output == INTERRUPTED and loaded.history[-1].call_id == "c1"
    assert loaded.transcript[-1] == {"type": "run_end", "runId": "r9", "seq": 1, "text": "",
                                     "stopReason": "aborted", "interrupted": True}
    assert loaded.running is None
    again = json.loads((store_dir / "t1.json").read_text())  # the repair was saved
    assert again["running"] is None and again["history"][-1]["role"] == "tool"


def test_threads_requests(tmp_path: Path) -> None:
    session, conv = boot(tmp_path, [{"text": "one"}, {"text": "two"}])
    first = request(conv, op="list")["value"]["current"]
    prompt(session, conv, "r1", "in the first")
    second = request(conv, op="create", title="  Second  ")["value"]
    assert second["title"] == "Second" and second["messages"] == 0
    assert session.agent.history == []
    prompt(session, conv, "r2", "in the second")
    listing = request(conv, op="list")["value"]
    assert listing["current"] == second["id"] and len(listing["threads"]) == 2
    titles = {t["id"]: t["title"] for t in listing["threads"]}
    assert titles == {first: "in the first", second["id"]: "Second"}  # untitled: its prompt
    assert request(conv, op="switch", id=first)["value"]["messages"] == 2
    assert [m.role for m in session.agent.history] == ["user", "assistant"]
    assert request(conv, op="rename", id=first, title="Renamed")["value"]["title"] == "Renamed"
    assert request(conv, op="delete", id=second["id"])["ok"]
    assert [t["id"] for t in request(conv, op="list")["value"]["threads"]] == [first]
    bad = request(conv, op="switch", id="nope")
    assert not bad["ok"] and bad["code"] == "EINVAL" and "no thread" in bad["message"]
    assert not request(conv, op="explode")["ok"]
    assert not json.loads(conv.request("[1]"))["ok"]
    assert not json.loads(conv.request("{"))["ok"]


def test_a_damaged_thread_file_is_skipped(tmp_path: Path) -> None:
    store_dir = tmp_path / "threads"
    store_dir.mkdir()
    (store_dir / "bad.json").write_text("{not json")
    (store_dir / "worse.json").write_text('{"id": "x", "history": [{"role": "alien"}]}')
    store = ThreadStore(str(store_dir))
    assert len(store.threads) == 1 and store.current.history == []


def test_an_untitled_thread_takes_its_first_prompts_first_line(tmp_path: Path) -> None:
    thread = Thread({"id": "t1"})
    thread.record({"type": "run_start", "runId": "r1", "prompt": "\n\n  Fix the bug  \nin x"})
    assert thread.title == "Fix the bug"
    thread.record({"type": "run_start", "runId": "r2", "prompt": "something else"})
    assert thread.title == "Fix the bug"  # only the first prompt names it
    long = Thread({"id": "t2"})
    long.record({"type": "run_start", "runId": "r1", "prompt": "word " * 40})
    assert len(long.title) == 80 and long.title.endswith("…")
