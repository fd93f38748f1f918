"""A long session: 400 turns (10,000 in the long mode) of the scripted model with tool
calls, through the Session the worker uses, with memory traced (tracemalloc).

The stated bound (docs/reliability.md): from turn 100 to the last turn, memory grows by
at most 20 KB a turn, which is the conversation kept, as the worker keeps it: the
agent's history (about 5 KB a turn here: five messages) and the thread's transcript
(about 10 KB: a dozen events); with the conversation dropped at the end, less than
256 KB is left, so nothing else accumulates.
"""

import asyncio
import gc
import json
import time
import tracemalloc

from fuzz_scale import report, scale

from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.workspace.checkpoints import MAX_CHECKPOINTS

PER_TURN_BOUND = 20 * 1024
RESIDUE_BOUND = 256 * 1024


class CountingRuntime(NativeRuntime):
    """Checks and counts what the page would receive, keeps nothing."""

    def __init__(self, workspace):
        super().__init__(workspace)
        self.run_ends = 0
        self.events = 0

    def post(self, message_json):
        message = json.loads(message_json.encode("utf-8"))
        self.events += 1
        self.run_ends += message["type"] == "run_end"


def script(turns):
    for i in range(turns):
        yield {"text": f"Turn {i}: writing and reading.", "toolCalls": [
            {"name": "write", "arguments": {"path": f"notes/f{i % 10}.txt",
                                            "content": f"turn {i}\n" * 20}},
            {"name": "read", "arguments": {"path": f"notes/f{i % 10}.txt"}}]}
        yield {"text": f"Done with turn {i}."}


def traced():
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_memory_over_a_long_session(tmp_path):
    # 400 turns (was 1,000; 10,000 in make fuzz): 300 turns past turn 100 show any growth
    # past the bound, and a leak of 1 KB a turn leaves more than the residue's bound
    turns = scale(400, 10_000)
    runtime = CountingRuntime(str(tmp_path / "ws"))
    config = json.dumps({"model": {"api": "scripted", "turns": list(script(turns))}})
    session = Session.from_options(config, runtime)
    marks = {}
    started = time.monotonic()

    async def soak():
        for turn in range(1, turns + 1):
            result = await session.prompt(f"r{turn}", f"prompt {turn}")
            assert result.stop_reason == "stop", (turn, result)
            if turn in (100, turns):
                marks[turn] = traced()

    # What the first turns import or cache once (modules imported on first use, compiled
    # patterns) is no growth: a short session of its own first, untraced, so that the
    # residue is the same whether this test runs alone or after others.
    warm_config = json.dumps({"model": {"api": "scripted", "turns": list(script(3))}})
    warm = Session.from_options(warm_config, CountingRuntime(str(tmp_path / "warm")))

    async def warm_up():
        await warm.prompt("warm", "prompt")

    asyncio.run(warm_up())
    tracemalloc.start()
    try:
        asyncio.run(soak())
        session.conversations.store.current.history.clear()
        session.conversations.store.current.transcript.clear()
        session.agent.model.requests.clear()  # the scripted model keeps the latest few
        assert len(session.checkpoints.ids()) == min(turns, MAX_CHECKPOINTS)  # bounded
        session.checkpoints.clear()
        residue = traced()
    finally:
        tracemalloc.stop()
    per_turn = (marks[turns] - marks[100]) / (turns - 100)
    assert runtime.run_ends == turns
    assert per_turn <= PER_TURN_BOUND, f"{per_turn:.0f} bytes a turn"
    assert residue <= RESIDUE_BOUND, f"{residue} bytes left without the conversation"
    report("soak", turns=turns, tool_calls=2 * turns, events=runtime.events,
           memory_at_100=marks[100], memory_at_end=marks[turns], bytes_per_turn=round(per_turn),
           residue_without_conversation=residue, seconds=round(time.monotonic() - started, 1))
