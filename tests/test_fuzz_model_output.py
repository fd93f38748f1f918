"""Model output alone must not break a session: generated turns (text with lone
surrogates, tool calls with any name and any arguments text: malformed, deep, random
patterns for grep and find) run through the real loop and the built-in tools.

Oracles: every run ends with one ``run_end`` and no ``internal`` error; every event is
JSON that encodes as UTF-8; nothing outside the workspace changes; the next prompt works.
"""

import asyncio
import json
import os
import time

from fuzz_scale import fuzz_settings, report, scale
from hypothesis import given
from hypothesis import strategies as st

from harness import events as ev
from harness.agent import Agent, RunContext
from harness.messages import Message
from harness.models.scripted import ScriptedModel, ScriptedTurn
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.workspace.jail import Workspace

TOOLS = ["read", "write", "edit", "ls", "grep", "find", "nope", ""]
KEYS = ["path", "content", "pattern", "glob", "edits", "oldText", "newText", "offset",
        "limit", "literal", "ignoreCase", "context"]
text = st.text(alphabet=st.characters(codec=None), max_size=12)  # surrogates included
scalar = st.none() | st.booleans() | st.integers(-5, 10**6) | text | st.sampled_from(
    ["(a+)+$", "*a*a*a*a*b", "**/*", ".*", "[", "a.txt", "../x", "/etc/passwd", "d/e"])
values = st.recursive(scalar, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
                      max_leaves=8)
regexish = st.text(alphabet="a()|*+?{}[]^$.\\1,2-bw:=<!P>", max_size=16)


def call_of(name, **fields):
    required = {k: v for k, v in fields.items() if not k.startswith("opt_")}
    optional = {k[4:]: v for k, v in fields.items() if k.startswith("opt_")}
    return st.tuples(st.just(name), st.fixed_dictionaries(required, optional=optional)
                     .map(json.dumps))


plausible = st.one_of(  # well-formed calls, so the tools themselves run on odd input
    call_of("grep", pattern=regexish, opt_path=scalar, opt_glob=regexish,
            opt_ignoreCase=st.booleans(), opt_context=st.integers(0, 3)),
    call_of("find", pattern=regexish, opt_path=scalar),
    call_of("write", path=text, content=text),
    call_of("read", path=st.sampled_from(["a.txt", ".", "d", "\ud800"]),
            opt_offset=st.integers(-1, 5), opt_limit=st.integers(0, 5)),
    call_of("edit", path=st.just("a.txt"),
            edits=st.lists(st.fixed_dictionaries({"oldText": text, "newText": text}),
                           max_size=2)),
    call_of("ls", path=scalar),
)
arguments = st.one_of(  # anything at all as the arguments text
    st.dictionaries(st.sampled_from(KEYS), values, max_size=4).map(json.dumps),
    text,
    st.integers(1, 3000).map(lambda n: '{"path": ' + "[" * n + "]" * n + "}"),
    st.sampled_from(['{"path": "a.t', "null", "[]", '{"path": "\\ud800"}', "{}"]),
)
turn = st.builds(
    lambda t, calls: ScriptedTurn(text=t, tool_calls=[{"name": n, "arguments": a}
                                                      for n, a in calls]),
    text, st.lists(plausible | st.tuples(st.sampled_from(TOOLS), arguments), min_size=1,
                   max_size=3))


def test_generated_model_output(tmp_path):
    (tmp_path / "outside.txt").write_text("outside")
    counts = {"runs": 0, "tool_calls": 0, "error_results": 0}
    started = time.monotonic()

    @fuzz_settings(short=150, long=5000)
    @given(st.lists(turn, min_size=1, max_size=4))
    def check(turns):
        ws = Workspace(tmp_path / "ws")
        with open(ws.resolve("a.txt").real, "w") as f:
            f.write("aaaa\nneedle\n")
        model = ScriptedModel([*turns, ScriptedTurn(text="end"), ScriptedTurn(text="next")])
        agent = Agent(model, ToolSet(builtin_tools()), ToolContext(ws), max_steps=len(turns) + 1)
        out = []

        def sink(event):
            out.append(json.loads(ev.to_json(event).encode("utf-8")))

        async def both():
            history: list[Message] = []  # one conversation, continued by the second run
            return (await agent.run("go", RunContext("r1", history), sink),
                    await agent.run("again", RunContext("r2", history), sink))

        first, second = asyncio.run(both())
        counts["runs"] += 1
        assert [e["type"] for e in out].count("run_end") == 2
        assert not [e for e in out if e["type"] == "error" and e["code"] == "internal"], out
        assert first.stop_reason == "stop" and first.text == "end"
        assert second.text == "next"
        ends = [e for e in out if e["type"] == "tool_end"]
        counts["tool_calls"] += len(ends)
        counts["error_results"] += sum(e["isError"] for e in ends)
        assert sorted(os.listdir(tmp_path)) == ["outside.txt", "ws"]

    check()
    assert counts["runs"] >= scale(150, 5000)
    report("model-output", **counts, internal_errors=0,
           seconds=round(time.monotonic() - started, 1))
