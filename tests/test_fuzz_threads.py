"""A property of the thread store (harness/threads.py): whatever a thread went through
(runs of events, text merged into the last event, messages added, the history rewritten
by a compaction or cut by a rewind, renames, events dropped by the transcript's bound,
saves that append and saves that write it whole), a store opened on the same directory
reads back exactly the thread as it was at its last save. 50 stories in ``make test``
(fixed seed), 2,000 in ``make fuzz`` (tests/fuzz_scale.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fuzz_scale import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from harness import threads
from harness.messages import AssistantMessage, UserMessage
from harness.threads import ThreadStore

TEXT = st.text(alphabet="ab \n\u00e9\U0001f600", max_size=30)
# One run: its events (deltas merge into the last one), the messages it adds, and where
# the store saves meanwhile (at a run's start, a tool's end and its end, as the session
# does, and at a rename from the page); then what may happen to the history between runs.
RUN = st.tuples(
    st.lists(st.tuples(st.sampled_from(["delta", "tool", "rename"]), TEXT), max_size=8),
    st.lists(TEXT, max_size=3),
    st.sampled_from(["none", "compact", "cut", "rename"]),
)


def same(a: Any, b: Any) -> bool:
    return bool(a.dump() | {"generation": 0} == b.dump() | {"generation": 0})


@fuzz_settings(50, 2000)
@given(runs=st.lists(RUN, min_size=1, max_size=12), small_journal=st.booleans())
def test_a_reopened_store_reads_back_the_thread_as_last_saved(
        tmp_path_factory: pytest.TempPathFactory, runs: list[Any], small_journal: bool) -> None:
    directory = tmp_path_factory.mktemp("threads")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threads, "MAX_TRANSCRIPT_EVENTS", 9)  # events are dropped, often
        if small_journal:  # the journal outgrows its bound, and the thread is written whole
            patch.setattr(threads, "JOURNAL_MIN_BYTES", 300)
        store = ThreadStore(str(directory))
        thread = store.current
        for n, (events, messages, after) in enumerate(runs):
            run = f"r{n}"
            thread.record({"type": "run_start", "runId": run, "seq": 0, "prompt": f"p{n}"})
            thread.history.append(UserMessage(text=f"p{n}"))
            store.save(thread)
            for seq, (kind, text) in enumerate(events, start=1):
                if kind == "delta":
                    thread.record({"type": "text_delta", "runId": run, "seq": seq, "delta": text})
                elif kind == "rename":  # a save while text streams: later deltas extend
                    store.rename(thread.id, text)  # the event saved last
                else:
                    thread.record({"type": "tool_end", "runId": run, "seq": seq,
                                   "callId": f"c{seq}", "name": "read", "output": text,
                                   "isError": False})
                    store.save(thread)
            thread.history.extend(AssistantMessage(text=t) for t in messages)
            thread.record({"type": "run_end", "runId": run, "seq": len(events) + 1, "text": "",
                           "stopReason": "stop"})
            store.save(thread)
            if after == "compact" and len(thread.history) > 1:
                thread.history[: len(thread.history) - 1] = [UserMessage(text=f"summary {n}")]
                store.save(thread)
            elif after == "cut":
                del thread.history[len(thread.history) // 2:]
                store.save(thread)
            elif after == "rename":
                store.rename(thread.id, f"title {n}")
            reread = ThreadStore(str(directory)).get(thread.id)
            assert same(reread, thread), (n, after)
        assert [p.name for p in Path(directory).iterdir() if p.name.endswith(".json")] == []
