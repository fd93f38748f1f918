"""A long thread in the browser: prompts of four tool turns each (write, read, edit, ls)
and an answer, through the real worker and Pyodide, timed one by one; the memory of the
page and its worker at prompt 100 and at the last.

Time: the lower quartile of the last 50 prompts within 1.1x that of prompts 51-100 (1.25x
for the 300-prompt run, see TIME_BOUND). The lower quartile, not the median: on a shared two-core machine the median of 50 prompts
moves by 20% between windows with nothing growing (other processes take the core); the
lower quartile is what a prompt costs when left alone, and still moves with any cost
that every prompt pays. Memory: Chromium's own measure of the page and its workers
(performance.measureUserAgentSpecificMemory, on a cross-origin isolated page; it counts
JS heaps and their ArrayBuffers, such as the worker's in-memory files, but not Pyodide's
linear memory, which is reported beside it) within 1.1x; Pyodide's linear memory within
1.5x.

300 prompts here (``make test``); ``PYHARNESS_SOAK_PROMPTS=1000`` for the long run
(``make fuzz``). The page side is in e2e/pages/rows/soak.mjs."""

import json
import os
import statistics
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.conftest import BUNDLE, ROOT, call
from tooling.serve import StaticServer

PROMPTS = int(os.environ.get("PYHARNESS_SOAK_PROMPTS", "300"))
CHUNK = 50
# Tokens: the history is summarised to fit every 40 prompts or so, as a real model's
# window makes it (without one the scripted model would be sent a history of 9,000
# messages at prompt 1,000, which no model takes).
CONTEXT_WINDOW = 32_000
# The lower quartile of the last 50 prompts against that of prompts 51-100: the issue's
# 1.1x for the long run; 1.25x for the 300 prompts of make test, where this shared
# two-core machine moved the ratio between 0.92 and 1.2 over runs with nothing growing
# (the growth this row guards against was 5.5x by prompt 400, 3x by prompt 250).
TIME_BOUND = 1.1 if PROMPTS >= 1000 else 1.25
MEMORY_BOUND = 1.1  # the renderer (page and workers) at the last prompt against prompt 100
# Pyodide's linear memory (the worker's Python heap, which Chromium's measure does not
# count) at the last prompt against prompt 100: it only grows, by whole pages, so a bound
# of its own (1.2x measured over 300 prompts). This was a row of its own, 1,000 one-tool
# prompts without compaction (e2e/test_robustness.py); this row's 300 prompts are 1,500
# model turns.
WASM_BOUND = 1.5


def quartile(ms: list[float]) -> float:
    """The lower quartile: what a prompt costs when the shared machine leaves it alone."""
    return statistics.quantiles(ms, n=4)[0]


@pytest.fixture
def isolated(page: Any) -> Iterator[Any]:
    """The e2e page served cross-origin isolated, so Chromium measures the memory of the
    page with its workers (performance.measureUserAgentSpecificMemory)."""
    srv = StaticServer({"/": ROOT / "e2e" / "pages", "/pyharness/": BUNDLE}, isolate=True).start()
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{srv.url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    yield page
    call(page, "soak.stop")
    srv.stop()


@pytest.mark.serial  # times each prompt
def test_a_long_thread_keeps_its_prompt_time_and_memory_flat(isolated: Any) -> None:
    assert PROMPTS >= 200, "the soak compares prompts 51-100 with the last 50"
    assert call(isolated, "soak.start", PROMPTS, CONTEXT_WINDOW)["crossOriginIsolated"] is True
    ms: list[float] = []
    memory = {}
    while len(ms) < PROMPTS:
        ms += call(isolated, "soak.run", min(CHUNK, PROMPTS - len(ms)))
        if len(ms) == 100:
            memory["at 100"] = call(isolated, "soak.memory")
    memory["at end"] = call(isolated, "soak.memory")
    medians = [round(statistics.median(ms[i:i + CHUNK]), 1) for i in range(0, PROMPTS, CHUNK)]
    quartiles = [round(quartile(ms[i:i + CHUNK]), 1) for i in range(0, PROMPTS, CHUNK)]
    early, late = quartile(ms[50:100]), quartile(ms[-CHUNK:])
    renderer = memory["at end"]["renderer"] / memory["at 100"]["renderer"]
    wasm = memory["at end"]["wasm"] / memory["at 100"]["wasm"]
    print(json.dumps({"prompts": PROMPTS, "median ms per 50": medians,
                      "lower quartile ms per 50": quartiles,
                      "time ratio": round(late / early, 3), "memory": memory,
                      "renderer ratio": round(renderer, 3), "wasm ratio": round(wasm, 3)}))
    assert late <= early * TIME_BOUND, medians
    assert renderer <= MEMORY_BOUND, memory
    assert wasm <= WASM_BOUND, memory
