"""Patterns from the model: catastrophic ones refused fast, ordinary ones still work,
and the worst case of what is accepted stays inside the step budget."""

import asyncio
import json
import re
import time

import pytest

from harness.limits import MAX_SEARCH_LINE_CHARS, MIN_USEFUL_CHARS
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.tools.regex_guard import Bound, PatternRefused, check
from harness.tools.search import _strip_dot_star, compile_glob
from harness.workspace.jail import Workspace


def tool(ws, name, **args):
    return asyncio.run(ToolSet(builtin_tools()).execute(name, json.dumps(args), ToolContext(ws)))


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path / "ws")


def test_the_issue_pattern_is_refused_fast_with_a_way_out(ws):
    with open(ws.resolve("a.txt").real, "w") as f:
        f.write("a" * 40 + "!\n")
    started = time.process_time()
    out = tool(ws, "grep", pattern="(a+)+$")
    assert time.process_time() - started < 1.0  # CPU time: refused at once
    assert out.is_error and "repeat inside a repeat" in out.output
    assert "literal=true" in out.output
    assert tool(ws, "grep", pattern="(a+)+$", literal=True).output == "No matches found"


@pytest.mark.parametrize(("pattern", "why"), [
    (r"(a+)+$", "repeat inside a repeat"),
    (r"(\w+\s?)*x", "repeat inside a repeat"),
    (r"(?:a*){2,}", "repeat inside a repeat"),
    (r"(a|ab)*c", "more than one way"),
    (r"(a?a)+b", "more than one way"),
    (r"(?:x|y|xy)+z", "more than one way"),
    (r"(?:(?=a)a)*", "more than one way"),
    (r"(?i)(?:ab|Ac)+d", "more than one way"),
    (r"(?:[^x]z|yz)+", "more than one way"),
    (r"(?:\wx|-y)+=", "more than one way"),
    (r"(a)\1", "backreference"),
    (r"(?P<q>['\"]).*?(?P=q)", "backreference"),
    (r"(a)?(?(1)b|c)", "backreference"),
    (r"a*a*a*a*a*b", "variable-length repeats"),
    (r"(?:a*){10}", "variable-length repeats"),
    (r"(?:a?){30}a{30}", "ways at each position"),
    (r"(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)"
     r"(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)(?:a|a?)b", "ways"),
    ("x" * 1001, "limit is 1,000"),
    ("(" * 500 + ")" * 500, ""),
])
def test_catastrophic_patterns_are_refused(pattern, why):
    with pytest.raises(PatternRefused) as info:
        check(pattern)
    assert why in str(info.value) and "literal=true" in str(info.value)


@pytest.mark.parametrize("pattern", [
    r"def \w+\(", r"TODO|FIXME", r"^import (os|sys)$", r"\bfoo\b", r"[A-Z][a-z]+Error",
    r"(?:ab|cd)+x", r"(?:[a-z]{3})+", r"\d{4}-\d{2}-\d{2}", r"foo.*bar", r"(?i)class\s+\w+",
    r"(?<=x)y", r"(?>a+)b", r"a++b", r"x{2,5}y?", r"(?:\\.|[^\"\\])*", r"(?:\w|-)+=",
    r"(?i)(?:a|A)+b", r"(?:ab|[^a]c)+", r"colou?r", r"https?://\S+", r"(?:ab|cd)(?:ef|gh)",
])
def test_ordinary_patterns_are_accepted(pattern):
    bound = check(pattern)
    assert bound.max_chars() >= MIN_USEFUL_CHARS


def test_the_bound_holds_on_adversarial_lines():
    """The worst line each accepted pattern can get, at the length it may search: each
    stays near the budget (about 0.25 s), far from a hang."""
    for pattern, unit in [(r"a*ab", "a"), (r"a*a*b", "a"), (r"a*a*a*b", "a"),
                          (r"(?:ab|cd)+x", "ab"), (r".*a.*y", "a"), (r"(?:a?){12}a{12}b", "a"),
                          (r"a?a?a?a?a?a*b", "a")]:
        n = check(pattern).max_chars()
        line = (unit * n)[:n]
        started = time.process_time()
        re.search(pattern, line)
        assert time.process_time() - started < 2.0, pattern


def test_max_chars_follows_degree_and_width():
    assert Bound(0, 5).max_chars() == MAX_SEARCH_LINE_CHARS
    assert Bound(1, 1).max_chars() == 15_811  # sqrt(2.5e8)
    assert Bound(2, 1).max_chars() == 629
    assert Bound(2, 1).max_chars(anchored=True) == 15_811
    assert Bound(0, 1, paths=2**30).max_chars(anchored=True) == 0


def test_grep_searches_long_lines_only_as_far_as_the_bound(ws):
    n = check(r"a*ab").max_chars()
    with open(ws.resolve("long.txt").real, "w") as f:
        f.write("x" * (n + 10) + "aab\nshort aab\n")
    out = tool(ws, "grep", pattern="a*ab")
    assert out.output.startswith("long.txt:2: short aab")
    assert f"1 lines longer than {n:,} characters were searched only that far" in out.output
    assert tool(ws, "grep", pattern="aab", literal=True).output.count("\n") >= 1


def test_leading_and_trailing_dot_star_cost_nothing(ws):
    assert _strip_dot_star(".*foo.*") == "foo"
    assert _strip_dot_star("^.*foo.*$") == "foo"
    assert _strip_dot_star(r"foo\.*") == r"foo\.*"
    assert _strip_dot_star(".*+x") == ".*+x"
    with open(ws.resolve("a.py").real, "w") as f:
        f.write("def main():\n    pass\n")
    assert tool(ws, "grep", pattern=".*def .*main.*").output == "a.py:1: def main():"


def test_globs_are_bounded_too(ws):
    with pytest.raises(PatternRefused):
        compile_glob("*a*a*a*a*a*a*b")
    match = compile_glob("*a*b*")
    assert match("xaybz") and not match("x" * (match.max_chars + 1) + "ab")
    assert match.skipped == 1
    assert compile_glob("src/**/*.py")("src/a/b/c.py")
    out = tool(ws, "find", pattern="*a*a*a*a*a*a*b")
    assert out.is_error and "glob" in out.output and "literal" not in out.output.split(";")[0]


def test_grep_and_find_stop_at_the_deadline_and_say_so(ws, monkeypatch):
    import harness.tools.search as search

    for i in range(3):
        with open(ws.resolve(f"f{i}.txt").real, "w") as f:
            f.write("needle\n")
    monkeypatch.setattr(search, "SEARCH_DEADLINE_S", -1.0)
    out = tool(ws, "grep", pattern="needle")
    assert out.output.startswith("No matches found") and "stopped after -1 s" in out.output
    out = tool(ws, "find", pattern="*.txt")
    assert "results are partial" in out.output
