"""Threads (harness/threads.py): conversations kept beside the workspace, continued after
a restart, repaired after a cut-off run, and the h.threads requests."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from harness.agent import RunContext
from harness.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.threads import INTERRUPTED, Conversations, History, Thread, ThreadStore


def boot(tmp_path: Path, turns: list[dict[str, Any]],
         **options: Any) -> tuple[Session, Conversations]:
    """A session and its conversations, as the worker makes them (state in tmp_path)."""
    runtime = NativeRuntime(str(tmp_path / "work"), threads=str(tmp_path / "threads"))
    config = json.dumps({"model": {"api": "scripted", "turns": turns}, **options})
    session = Session.from_options(config, runtime)
    return session, session.conversations


def prompt(session: Session, conv: Conversations, run_id: str, text: str) -> Any:
    async def go() -> Any:
        return await session.prompt(run_id, text)

    return asyncio.run(go())


def request(session: Session, **fields: Any) -> Any:
    return json.loads(session.threads(json.dumps(fields)))


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
    events = request(session, op="transcript")["value"]["events"]
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
    again = ThreadStore(str(store_dir)).current  # the repair was saved
    assert again.running is None and isinstance(again.history[-1], ToolResult)
    assert again.transcript == loaded.transcript


def test_threads_requests(tmp_path: Path) -> None:
    session, conv = boot(tmp_path, [{"text": "one"}, {"text": "two"}])
    first = request(session, op="list")["value"]["current"]
    prompt(session, conv, "r1", "in the first")
    second = request(session, op="create", title="  Second  ")["value"]
    assert second["title"] == "Second" and second["messages"] == 0
    assert conv.store.current.history == []  # what the next run continues
    prompt(session, conv, "r2", "in the second")
    listing = request(session, op="list")["value"]
    assert listing["current"] == second["id"] and len(listing["threads"]) == 2
    titles = {t["id"]: t["title"] for t in listing["threads"]}
    assert titles == {first: "in the first", second["id"]: "Second"}  # untitled: its prompt
    assert request(session, op="switch", id=first)["value"]["messages"] == 2
    assert [m.role for m in conv.store.current.history] == ["user", "assistant"]
    assert request(session, op="rename", id=first, title="Renamed")["value"]["title"] == "Renamed"
    assert request(session, op="delete", id=second["id"])["ok"]
    assert [t["id"] for t in request(session, op="list")["value"]["threads"]] == [first]
    bad = request(session, op="switch", id="nope")
    assert not bad["ok"] and bad["code"] == "EINVAL" and "no thread" in bad["message"]
    assert not request(session, op="explode")["ok"]
    assert not json.loads(session.threads("[1]"))["ok"]
    assert not json.loads(session.threads("{"))["ok"]


def test_a_damaged_thread_file_is_skipped(tmp_path: Path) -> None:
    store_dir = tmp_path / "threads"
    store_dir.mkdir()
    (store_dir / "bad.json").write_text("{not json")
    (store_dir / "worse.json").write_text('{"id": "x", "history": [{"role": "alien"}]}')
    store = ThreadStore(str(store_dir))
    assert len(store.threads) == 1 and store.current.history == []


def test_a_thread_is_kept_gzipped_and_an_older_plain_file_is_read_then_replaced(
        tmp_path: Path) -> None:
    """The whole thread is its JSON gzipped (it lives in the worker's memory as well as in
    OPFS); a thread stored before that (``<id>.json``) is read as it is, wins over nothing
    newer, and is replaced by its ``.json.gz`` at its next whole write."""
    store = ThreadStore(str(tmp_path))
    thread = store.current
    for n in range(200):
        thread.record({"type": "tool_end", "runId": "r1", "seq": n, "callId": f"c{n}",
                       "name": "read", "output": "the same line of a file\n" * 20})
    store._save(thread, whole=True)  # as a compaction's save is
    gz = tmp_path / f"{thread.id}.json.gz"
    text = gzip.decompress(gz.read_bytes())
    assert json.loads(text)["transcript"] == thread.transcript
    assert gz.stat().st_size * 10 < len(text)
    assert {p.name for p in tmp_path.iterdir()} == {f"{thread.id}.json.gz", "current"}

    # an older store: the plain file, no gzip beside it
    legacy = Thread({"id": "old1", "title": "from before", "history": [],
                     "transcript": [{"type": "run_start", "runId": "r0", "seq": 0}]})
    legacy.record({"type": "run_end", "runId": "r0", "seq": 1, "text": "", "stopReason": "stop"})
    (tmp_path / "old1.json").write_text(json.dumps(legacy.dump()))
    # and a plain file left behind beside its gzip (a rewrite cut off before the unlink):
    # the gzip wins
    (tmp_path / f"{thread.id}.json").write_text(json.dumps({**thread.dump(), "title": "stale"}))
    reopened = ThreadStore(str(tmp_path))
    assert same(reopened.get("old1"), legacy) and reopened.get(thread.id).title == thread.title
    # replaced by its gzip as it was loaded
    assert not (tmp_path / "old1.json").exists() and (tmp_path / "old1.json.gz").exists()
    reopened.rename("old1", "renamed")
    again = ThreadStore(str(tmp_path)).get("old1")
    assert again.title == "renamed" and again.transcript == legacy.transcript
    reopened.delete("old1")
    reopened.delete(thread.id)  # both of its files
    assert not any(p.name.startswith((thread.id, "old1")) for p in tmp_path.iterdir())


def test_a_damaged_gzip_is_skipped(tmp_path: Path) -> None:
    """Cut short, not a gzip, or its deflate stream damaged (zlib.error, neither OSError
    nor ValueError): each is skipped, and the store opens."""
    (tmp_path / "cut.json.gz").write_bytes(gzip.compress(b'{"id": "cut"}')[:-6])
    (tmp_path / "junk.json.gz").write_bytes(b"not a gzip")
    damaged = bytearray(gzip.compress(b'{"id": "bad"}'))
    damaged[10] = 0xFF  # the first deflate block's type: reserved, "invalid block type"
    (tmp_path / "bad.json.gz").write_bytes(bytes(damaged))
    store = ThreadStore(str(tmp_path))
    assert list(store.threads) == [store.current.id]
    assert store.current.id not in ("cut", "junk", "bad")


def test_an_untitled_thread_takes_its_first_prompts_first_line(tmp_path: Path) -> None:
    thread = Thread({"id": "t1"})
    thread.record({"type": "run_start", "runId": "r1", "prompt": "\n\n  Fix the bug  \nin x"})
    assert thread.title == "Fix the bug"
    thread.record({"type": "run_start", "runId": "r2", "prompt": "something else"})
    assert thread.title == "Fix the bug"  # only the first prompt names it
    long = Thread({"id": "t2"})
    long.record({"type": "run_start", "runId": "r1", "prompt": "word " * 40})
    assert len(long.title) == 80 and long.title.endswith("…")


def same(a: Thread, b: Thread) -> bool:
    return a.dump() | {"generation": 0} == b.dump() | {"generation": 0}


def test_a_long_thread_is_saved_by_appending_not_rewriting(tmp_path: Path) -> None:
    """200 tool calls with 20 KB outputs: each save appends what changed; the thread file
    is rewritten only when the journal outgrows its bound (a dozen times, not 202), and
    what is read back is exactly the thread."""
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "big.txt").write_text("x" * 20_000)
    read = {"name": "read", "arguments": {"path": "big.txt"}}
    turns = [{"text": f"step {i}", "toolCalls": [read]} for i in range(200)] + [{"text": "end"}]
    session, conv = boot(tmp_path, turns, maxSteps=250)
    writes: list[str] = []
    store = conv.store
    original = store._save

    def counting(thread: Thread, whole: bool = False) -> None:
        before = thread.generation
        original(thread, whole)
        writes.append("whole" if thread.generation != before else "append")

    store._save = counting  # type: ignore[method-assign]
    assert prompt(session, conv, "r1", "read it 200 times").text == "end"
    thread = store.current
    assert len(writes) == 202  # run_start, 200 tool_end, run_end
    # whole when the journal reaches a fourth of the thread's JSON: the thread grows by a
    # quarter between whole writes, 256 kB to 8 MB in about 15 (12 here), not 202
    assert 1 <= writes.count("whole") <= 16
    journal, whole = (tmp_path / "threads" / f"{thread.id}{ext}" for ext in (".jsonl", ".json.gz"))
    # the journal's bound is a fourth of the thread's JSON (not of its gzip)
    assert journal.stat().st_size <= max(256 * 1024, len(gzip.decompress(whole.read_bytes())) // 4)
    reread = ThreadStore(str(tmp_path / "threads")).get(thread.id)
    assert same(reread, thread) and len(reread.history) == 402


def test_a_journal_carries_merged_text_titles_and_survives_a_torn_line(tmp_path: Path) -> None:
    store = ThreadStore(str(tmp_path))
    thread = store.current
    thread.record({"type": "run_start", "runId": "r1", "seq": 0, "prompt": "hello"})
    thread.record({"type": "text_delta", "runId": "r1", "seq": 1, "delta": "Hel"})
    thread.history.append(UserMessage(text="hello"))
    store.save(thread)
    thread.record({"type": "text_delta", "runId": "r1", "seq": 2, "delta": "lo"})  # merged
    store.rename(thread.id, "Greeting")
    thread.record({"type": "run_end", "runId": "r1", "seq": 3, "text": "Hello",
                   "stopReason": "stop"})
    thread.history.append(AssistantMessage(text="Hello"))
    store.save(thread)
    journal = tmp_path / f"{thread.id}.jsonl"
    assert len(journal.read_text().splitlines()) == 3  # three saves, three lines
    reread = ThreadStore(str(tmp_path)).get(thread.id)
    assert same(reread, thread) and reread.transcript[1]["delta"] == "Hello"
    assert reread.title == "Greeting" and reread.running is None

    # a crash in the middle of the last append: the thread as of the line before
    journal.write_text(journal.read_text()[:-20])
    torn = ThreadStore(str(tmp_path)).get(thread.id)
    assert torn.title == "Greeting" and [m.role for m in torn.history] == ["user"]
    assert torn.generation > thread.generation  # rewritten whole, the torn line gone
    assert torn.transcript[-1]["interrupted"] is True  # its run was cut off by the crash
    assert same(ThreadStore(str(tmp_path)).get(thread.id), torn)


def test_a_stale_journal_is_ignored_and_removed(tmp_path: Path) -> None:
    store = ThreadStore(str(tmp_path))
    thread = store.current
    thread.history.extend([UserMessage(text="a"), AssistantMessage(text="b")])
    store.save(thread)
    generation = thread.generation
    thread.history[:1] = [UserMessage(text="summary of a")]  # as a compaction does
    store._save(thread, whole=True)  # as when the journal outgrew its bound
    assert thread.generation == generation + 1
    assert not (tmp_path / f"{thread.id}.jsonl").exists()
    # a journal of an older generation (a rewrite cut off before it removed the journal)
    stale = {"generation": generation, "title": "stale", "updated": 0, "running": None,
             "history": [2, []], "transcript": [0, []]}
    (tmp_path / f"{thread.id}.jsonl").write_text(json.dumps(stale) + "\n")
    reread = ThreadStore(str(tmp_path)).get(thread.id)
    assert reread.title == "" and reread.history[0].text == "summary of a"  # type: ignore[union-attr]
    assert not (tmp_path / f"{thread.id}.jsonl").exists()


def test_the_current_thread_is_the_one_a_restart_comes_back_to(tmp_path: Path) -> None:
    store = ThreadStore(str(tmp_path))
    first = store.current
    first.history.append(UserMessage(text="old"))
    store.save(first)
    second = store.create("newer")
    assert ThreadStore(str(tmp_path)).current.id == second.id
    store.switch(first.id)  # the older one, switched to and not changed since
    assert ThreadStore(str(tmp_path)).current.id == first.id
    store.delete(first.id)
    assert ThreadStore(str(tmp_path)).current.id == second.id


REWRITES = {
    "replace one": lambda h: h.__setitem__(0, UserMessage(text="a, shortened")),
    "replace a slice": lambda h: h.__setitem__(slice(0, 2), [UserMessage(text="summary")]),
    "delete": lambda h: h.__delitem__(0),
    "insert": lambda h: h.insert(0, UserMessage(text="before")),
    "pop": lambda h: h.pop(),
    "remove": lambda h: h.remove(h[0]),
    "clear": lambda h: h.clear(),
    "reverse": lambda h: h.reverse(),
    "sort": lambda h: h.sort(key=lambda m: m.role),
    "repeat": lambda h: h.__imul__(2),
}


@pytest.mark.parametrize("change", list(REWRITES))
def test_any_change_but_growth_goes_in_the_journal_as_the_whole_history(
        tmp_path: Path, change: str) -> None:
    """The journal appends only what was added; a history changed in any other way (in
    place, as compaction does) is one line with the whole history and none of the
    transcript (a compaction no longer writes the thread's 20,000 events again), and is
    read back exactly as it is."""
    store = ThreadStore(str(tmp_path))
    thread = store.current
    thread.record({"type": "run_start", "runId": "r1", "seq": 0, "prompt": "p"})
    thread.record({"type": "run_end", "runId": "r1", "seq": 1, "text": "", "stopReason": "stop"})
    thread.history.extend([UserMessage(text="a"), AssistantMessage(text="b"),
                           UserMessage(text="c")])
    store.save(thread)
    thread.history.append(AssistantMessage(text="d"))
    generation = thread.generation
    store.save(thread)
    REWRITES[change](thread.history)
    store.save(thread)
    assert thread.generation == generation  # appended, not written whole
    line = json.loads((tmp_path / f"{thread.id}.jsonl").read_text().splitlines()[-1])
    assert line["rewrite"] is True and line["history"][0] == 0
    assert len(line["history"][1]) == len(thread.history) and line["transcript"][1] == []
    assert same(ThreadStore(str(tmp_path)).get(thread.id), thread)


def test_the_agent_works_on_the_threads_own_history(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A compaction of the agent's history is seen by the journal: they are one list (each
    run's context holds the current thread's own history)."""
    session, conv = boot(tmp_path, [{"text": "one"}, {"text": "two"}])
    contexts: list[RunContext] = []
    run = session.agent.run

    async def recorded(prompt_: str, context: RunContext, *rest: Any) -> Any:
        contexts.append(context)
        return await run(prompt_, context, *rest)

    monkeypatch.setattr(session.agent, "run", recorded)
    prompt(session, conv, "r1", "in the first")
    assert contexts[-1].history is conv.store.current.history
    request(session, op="create")
    prompt(session, conv, "r2", "in the second")
    assert contexts[-1].history is conv.store.current.history
    assert isinstance(conv.store.current.history, History)


def test_lone_surrogates_reach_the_journal_as_replacement_characters(tmp_path: Path) -> None:
    """A prompt, model text and tool arguments with lone surrogates: every save is valid
    UTF-8 (a save that raised would end the run), and the thread reads back."""
    session, conv = boot(tmp_path, [
        {"text": "ok\ud800", "toolCalls": [
            {"name": "write", "arguments": {"path": "a\udc00.txt", "content": "z\ud800"}}]},
        {"text": "done\udfff"}])
    assert prompt(session, conv, "r1", "hi \ud800 there").stop_reason == "stop"
    thread = conv.store.current
    for path in (tmp_path / "threads").glob(f"{thread.id}.*"):
        data = path.read_bytes()
        (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")  # strict:
        # no surrogate was written
    reread = ThreadStore(str(tmp_path / "threads")).get(thread.id)
    assert same(reread, thread) and reread.title == "hi \ufffd there"
