"""Page tools on the Python side: schema validation (jsonschema), timeouts, errors,
replacing a built-in; and the model chosen by `model.api`."""

import asyncio
import json

import pytest

from harness.errors import UsageError
from harness.models.anthropic_messages import AnthropicMessagesModel
from harness.models.openai_chat import OpenAIChatModel
from harness.models.scripted import ScriptedModel
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.base import ToolContext


class PageStandIn:
    """Plays the page's side of a tool call (on CPython there is no page; the real
    round trip is e2e/test_providers.py in Chromium)."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []
        self.cancelled = []

    async def call(self, name, input_json):
        self.calls.append((name, json.loads(input_json)))
        answer = self.answers[name]
        if answer == "hang":
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.cancelled.append(name)
                raise
        return answer


SPECS = [
    {"name": "lookup", "description": "Find a thing",
     "parameters": {"type": "object", "properties": {"q": {"type": "string", "minLength": 1}},
                    "required": ["q"], "additionalProperties": False}},
    {"name": "hang", "timeoutMs": 50},
    {"name": "read", "description": "the page's read"},
]


def make(tmp_path, page=None, **options):
    config = {"model": {"api": "scripted", "turns": []}, "pageTools": SPECS, **options}
    runtime = NativeRuntime(str(tmp_path), page_tools=page)
    return Session.from_options(json.dumps(config), runtime)


def execute(session, name, args):
    ctx = ToolContext(session.workspace)
    return asyncio.run(session.agent.tools.execute(name, json.dumps(args), ctx))


def test_arguments_are_checked_against_the_page_schema(tmp_path):
    page = PageStandIn({"lookup": ('{"found": 1}', False)})
    s = make(tmp_path, page)
    ok = execute(s, "lookup", {"q": "x"})
    assert (ok.output, ok.is_error) == ('{"found": 1}', False)
    for bad in ({}, {"q": ""}, {"q": 3}, {"q": "x", "extra": 1}):
        out = execute(s, "lookup", bad)
        assert out.is_error and "Invalid arguments for tool 'lookup'" in out.output
    assert page.calls == [("lookup", {"q": "x"})]  # invalid calls never reach the page


def test_errors_timeouts_and_replacing_a_builtin(tmp_path):
    page = PageStandIn({"lookup": ("kaboom", True), "hang": "hang", "read": ("mine", False)})
    s = make(tmp_path, page)
    assert execute(s, "lookup", {"q": "x"}).output == "kaboom"
    late = execute(s, "hang", {})
    assert late.is_error and "did not answer within 50 ms" in late.output
    assert page.cancelled == ["hang"]
    assert execute(s, "read", {"path": "whatever"}).output == "mine"
    names = s.agent.tools.names()
    assert names.count("read") == 1 and names[-2:] == ["lookup", "hang"]  # replaced in place
    read = next(t for t in s.agent.tools.specs() if t.name == "read")
    assert read.description == "the page's read"


def test_a_huge_output_is_cut_like_a_builtin_tools(tmp_path):
    page = PageStandIn({"lookup": ("x" * 10_000_000, False), "read": ("line\n" * 5000, True)})
    s = make(tmp_path, page)
    out = execute(s, "lookup", {"q": "x"}).output
    assert len(out) < 52_000 and "[Output cut: the page tool returned 9.5 MB in 1 lines" in out
    err = execute(s, "read", {"path": "x"})
    assert err.is_error and "(2,000 whole lines) are shown.]" in err.output


def test_page_tool_named_like_the_shell_replaces_it(tmp_path):
    s = make(tmp_path, shell={"name": "read"})
    assert s.shell_config is None
    assert sum(n == "read" for n in s.agent.tools.names()) == 1


def test_page_tools_without_a_page(tmp_path):
    out = execute(make(tmp_path), "lookup", {"q": "x"})
    assert out.is_error and "only run in the browser" in out.output


@pytest.mark.parametrize(("tools", "message"), [
    ([{"name": "x", "parameters": {"type": "bogus"}}], "not a valid JSON Schema"),
    ([{"name": "a"}, {"name": "a"}], "same name"),
    ([{"name": "has space"}], "pageTools"),
])
def test_bad_page_tools_are_usage_errors(tmp_path, tools, message):
    config = {"model": {"api": "scripted", "turns": []}, "pageTools": tools}
    with pytest.raises(UsageError) as info:
        Session.from_options(json.dumps(config), NativeRuntime(str(tmp_path)))
    assert message in str(info.value)


@pytest.mark.parametrize(("model", "cls"), [
    ({"api": "scripted", "turns": []}, ScriptedModel),
    ({"api": "openai-chat", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"}, OpenAIChatModel),
    ({"api": "anthropic-messages", "model": "m"}, AnthropicMessagesModel),
])
def test_model_by_wire_api(tmp_path, model, cls):
    s = Session.from_options(json.dumps({"model": model}), NativeRuntime(str(tmp_path)))
    assert isinstance(s.agent.model, cls)


def test_unknown_api_names_the_choices(tmp_path):
    with pytest.raises(UsageError) as info:
        Session.from_options('{"model": {"api": "gemini"}}', NativeRuntime(str(tmp_path)))
    assert "openai-chat" in str(info.value) and "anthropic-messages" in str(info.value)


def test_deep_schemas_and_arguments_are_clear_errors_not_recursion_errors(tmp_path):
    deep = {}
    for _ in range(100):
        deep = {"type": "array", "items": deep}
    tools = [{"name": "deep", "parameters": {"type": "object", "properties": {"a": deep}}}]
    config = {"model": {"api": "scripted", "turns": []}, "pageTools": tools}
    with pytest.raises(UsageError, match="parameters nest 103 levels deep; the limit is 32"):
        Session.from_options(json.dumps(config), NativeRuntime(str(tmp_path)))
    recursive = {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
                 "type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}
    config["pageTools"] = [{"name": "rec", "parameters": recursive}]
    s = Session.from_options(json.dumps(config), NativeRuntime(str(tmp_path)))
    nested = []
    for _ in range(60):
        nested = [nested]
    out = execute(s, "rec", {"a": nested})  # within the 64-level argument limit: checked
    # (or, where the stack is smaller, a clear error instead of a RecursionError)
    assert out.output.startswith(("The arguments for tool 'rec' nest too deeply",
                                  "The page tool 'rec' can only run in the browser"))
