"""Cancel at every point of a run: after 0, 1, 2, ... event-loop steps of a run that
streams text and calls tools, ``Session.cancel`` lands somewhere new each time.

Oracles: the run ends with exactly one ``run_end`` (``aborted``, or ``stop`` when the
cancel came after the end); every tool call in the history is answered; the next
prompt on the same session works.
"""

import asyncio
import json
import time

from fuzz_scale import report, scale
from history_checks import consistent

from harness.runtime.native import NativeRuntime
from harness.session import Session


class Runtime(NativeRuntime):
    def post(self, message_json):
        self.messages.append(json.loads(message_json.encode("utf-8")))


def turns(shape):
    """A run of ``shape`` + 2 turns: text of growing length, one to three tool calls."""
    words = " ".join(["word"] * (shape % 4 + 1))
    calls = [{"name": "write", "arguments": {"path": "a.txt", "content": "one\n"}},
             {"name": "ls", "arguments": {}}, {"name": "read", "arguments": {"path": "a.txt"}}]
    return [*({"text": f"Step {i}: {words}.", "toolCalls": calls[: i % 3 + 1]}
              for i in range(shape % 5 + 1)), {"text": "All done here."}]


def test_cancel_at_every_step(tmp_path):
    steps = scale(200, 4000)
    outcomes: dict[str, int] = {}
    started = time.monotonic()
    for step in range(steps):
        runtime = Runtime(str(tmp_path / f"ws{step}"))
        shape = step // 40  # each shape is cancelled at 40 points in turn
        config = json.dumps({"model": {"api": "scripted",
                                       "turns": [*turns(shape), {"text": "again"}]}})
        session = Session.from_options(config, runtime)

        async def scenario(session=session, step=step):
            task = session.prompt("r1", "go")
            for _ in range(step % 40):  # a run takes 10 to 60 steps: most land inside
                await asyncio.sleep(0)
            session.cancel("r1")
            first = await task
            second = await session.prompt("r2", "again")
            return first, second

        first, second = asyncio.run(scenario())
        r1 = [m for m in runtime.messages if m["runId"] == "r1"]
        assert [m["type"] for m in r1].count("run_end") == 1 and r1[-1]["type"] == "run_end"
        assert first.stop_reason in ("aborted", "stop")
        assert consistent(session.conversations.store.current.history)
        assert second.stop_reason == "stop", (step, second)
        outcomes[first.stop_reason] = outcomes.get(first.stop_reason, 0) + 1
    assert outcomes.get("aborted", 0) >= steps // 3 and outcomes.get("stop", 0)  # both kinds
    report("cancel-every-step", runs=steps, outcomes=outcomes, unsettled=0,
           seconds=round(time.monotonic() - started, 1))
