"""A page tool's schema (maybe an MCP server's) cannot make the worker spend unbounded
time checking the model's arguments: backtracking patterns, pattern property names, an
exponential anyOf over a recursive $ref, a remote $ref; and the linear matcher agrees
with ``re`` wherever it runs."""

import asyncio
import json
import random
import re
import time

import pytest

from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.base import ToolContext
from harness.tools.regex_linear import LinearPattern, StepsExceeded, Unsupported

PATTERNS = [r"^(a+)+$", r"(a|ab)*c", r"^[a-z]+@[a-z]+\.(com|org)$", r"\bfoo\b", r"x{2,4}y",
            r"^$", r"a.*b", r"^(\w+\.)*\w+$", r"[^abc]{3}", r"^\d{3}-\d{4}$", r"colou?r",
            r"(?i)ABC", r"\Aab\Z", r"a$", r"(?m)^b$", r"\Bo", r"(x|y|)+z", r"[a-c]*?b"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_linear_matcher_agrees_with_re(pattern):
    linear, regex = LinearPattern(pattern), re.compile(pattern)
    rng = random.Random(pattern)
    texts = ["", "aaaa", "abc", "a@b.com", "123-4567", "foo bar", "color", "xxy", "ab\n",
             "a\nb\n", "www.example.com", "yz"]
    texts += ["".join(rng.choice("abcxyz@.-_ 01\nfoABC") for _ in range(rng.randint(0, 14)))
              for _ in range(1500)]
    for text in texts:
        assert linear.search(text, 10**7)[0] == (regex.search(text) is not None), text


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)b", r"a*+", r"(?>a+)b", r"(?i:a)b"])
def test_what_the_linear_matcher_cannot_run_is_named(pattern):
    with pytest.raises(Unsupported):
        LinearPattern(pattern)


def test_the_linear_matcher_is_linear_and_stops_at_its_budget():
    linear = LinearPattern(r"^(a+)+$")
    found, steps = linear.search("a" * 2000 + "b", 10**7)
    assert not found and steps < 2001 * 12
    with pytest.raises(StepsExceeded):
        linear.search("a" * 100_000 + "b", 10_000)


def session(tmp_path, parameters):
    config = {"model": {"api": "scripted", "turns": []},
              "pageTools": [{"name": "t", "parameters": parameters}]}
    return Session.from_options(json.dumps(config), NativeRuntime(str(tmp_path)))


def run(s, args):
    started = time.perf_counter()
    out = asyncio.run(s.agent.tools.execute("t", json.dumps(args), ToolContext(s.workspace)))
    return out.output, time.perf_counter() - started


NOT_IN_BROWSER = "can only run in the browser"  # the arguments passed the schema


def test_a_backtracking_pattern_is_checked_in_bounded_time(tmp_path):
    s = session(tmp_path, {"type": "object", "properties": {
        "s": {"type": "string", "pattern": "^(a+)+$"},
        "d": {"type": "string", "pattern": r"^(\w+\.)*\w+$"}}})
    out, took = run(s, {"s": "a" * 40 + "!"})  # re would take ~2**40 steps
    assert "does not match" in out and took < 1
    assert NOT_IN_BROWSER in run(s, {"s": "a" * 500, "d": "www.example.com"})[0]
    out, took = run(s, {"s": "a" * 1_000_000 + "!"})
    assert "too long to check against the schema pattern '^(a+)+$'" in out and took < 1
    assert "a" * 600 not in out  # the value is not echoed whole


def test_pattern_properties_and_their_union_are_bounded(tmp_path):
    s = session(tmp_path, {"type": "object", "patternProperties": {"^(x+)+$": {"type": "integer"}},
                           "additionalProperties": False})
    out, took = run(s, {"x" * 40 + "y": 1})  # additionalProperties runs the union
    assert "does not match any of the regexes" in out and took < 1
    out, took = run(s, {"x" * 30: "not an integer"})
    assert "is not of type 'integer'" in out and took < 1
    assert NOT_IN_BROWSER in run(s, {"xxx": 3})[0]


def test_a_pattern_nothing_can_bound_refuses_the_call_not_the_boot(tmp_path):
    s = session(tmp_path, {"type": "object", "properties": {
        "b": {"type": "string", "pattern": r"^(a)\1(b+)+$"}, "ok": {"type": "string"}}})
    out, took = run(s, {"b": "aab"})
    assert "cannot be checked here in bounded time" in out and "a backreference" in out
    assert took < 1
    assert NOT_IN_BROWSER in run(s, {"ok": "x"})[0]  # a call without it runs


def test_an_exponential_schema_is_stopped(tmp_path):
    branch = {"type": "array", "items": {"$ref": "#/$defs/n"}}
    s = session(tmp_path, {"$defs": {"n": {"anyOf": [branch, branch, {"type": "integer"}]}},
                           "type": "object", "properties": {"v": {"$ref": "#/$defs/n"}}})
    value: object = "x"
    for _ in range(40):
        value = [value]
    out, took = run(s, {"v": value})
    assert "take too long to check against the tool's schema" in out and took < 5
    assert NOT_IN_BROWSER in run(s, {"v": [[1], [2, [3]]]})[0]


def test_a_remote_ref_is_not_fetched(tmp_path):
    s = session(tmp_path, {"type": "object",
                           "properties": {"v": {"$ref": "http://127.0.0.1:9/x.json"}}})
    out, _ = run(s, {"v": 1})
    assert "has a $ref that cannot be resolved" in out and "outside the schema" in out
