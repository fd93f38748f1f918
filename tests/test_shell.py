"""The shell tool's Python side: clipping, result format, config, no tool without a runner."""

import asyncio
import json

import pytest

from harness.config import ShellConfig
from harness.runtime import ShellResult
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.base import ToolContext, ToolSet
from harness.tools.shell import ShellTool, clip, format_result
from harness.workspace.jail import Workspace


def test_clip_keeps_text_at_the_limit():
    assert clip("x" * 1000, 1000) == "x" * 1000


def test_clip_one_over_the_limit_keeps_head_and_tail():
    text = "h" * 500 + "t" * 501
    out = clip(text, 1000)
    assert len(out) <= 1000
    assert out.startswith("h" * 400) and out.endswith("t" * 400)
    assert "characters cut; 1001 in all" in out


def test_clip_never_splits_multibyte_characters():
    text = "é" * 700 + "😀" * 700
    out = clip(text, 1000)
    assert len(out) <= 1000
    out.encode("utf-8")  # every character is whole: encodes without surrogate errors
    assert out.startswith("é") and out.endswith("😀")
    kept = out.split("\n")
    assert set(kept[0]) == {"é"} and set(kept[-1]) == {"😀"}


def test_format_result_sections():
    assert format_result(ShellResult("hi\n", "", 0), 100, 10) == ("hi", False)
    assert format_result(ShellResult("", "", 0), 100, 10) == ("(no output)", False)
    text, failed = format_result(ShellResult("out\n", "warn\n", 2), 100, 10)
    assert failed and text == "out\n[stderr]\nwarn\n[exit 2]"
    text, failed = format_result(ShellResult("", "", 124, timed_out=True), 100, 5000)
    assert failed and "timed out after 5000 ms" in text and text.endswith("[exit 124]")
    text, _ = format_result(ShellResult("a" * 500, "b" * 500, 1), 200, 10)
    assert text.count("characters cut") == 2


class FakeShell:
    """A stand-in for the worker's just-bash: CPython has no shell to run (the real one
    is covered by e2e/test_shell.py in Chromium)."""

    def __init__(self, result):
        self.commands = ["cat", "ls"]
        self.packages = [("tabulate", "0.10.0")]
        self.result = result
        self.seen = []

    async def run(self, command, gate=None):
        self.seen.append(command)
        return self.result


def test_shell_tool_formats_what_the_runner_returns(tmp_path):
    runner = FakeShell(ShellResult("x\n", "oops\n", 3))
    tools = ToolSet([ShellTool(ShellConfig(name="sh", max_output=100), runner)])
    outcome = asyncio.run(tools.execute("sh", '{"command": "false"}',
                                        ToolContext(Workspace(tmp_path))))
    assert runner.seen == ["false"]
    assert outcome.is_error and outcome.output == "x\n[stderr]\noops\n[exit 3]"


def make_session(tmp_path, runner=None, **options):
    config = json.dumps({"model": {"api": "scripted", "turns": []}, **options})
    return Session.from_options(config, NativeRuntime(str(tmp_path), shell=runner))


def test_shell_option_adds_exactly_one_tool_and_discloses_it(tmp_path):
    runner = FakeShell(ShellResult("", "", 0))
    off = make_session(tmp_path, runner)
    assert "bash" not in off.agent.tools.names()
    assert "There is no shell" in off.system_prompt
    on = make_session(tmp_path, runner, shell={"timeoutMs": 2500, "maxCommands": 50})
    specs = [s for s in on.agent.tools.specs() if s.name == "bash"]
    assert len(specs) == 1
    assert specs[0].parameters["required"] == ["command"]
    assert "2500 ms" in specs[0].description
    prompt = on.system_prompt
    assert "Commands: cat, ls." in prompt and "python3 is real CPython 3.14" in prompt
    assert "2500 ms" in prompt and "No network" in prompt
    assert make_session(tmp_path, runner, shell=True).config.shell_config == ShellConfig()


def test_without_a_runner_there_is_no_shell_tool(tmp_path):
    """On CPython the runtime has no shell: the option asks for one, none is there, so
    the tool is left out and the prompt says so (rather than a tool that always fails)."""
    s = make_session(tmp_path, shell=True)
    assert "bash" not in s.agent.tools.names() and s.shell_config is None
    assert "There is no shell" in s.system_prompt


@pytest.mark.parametrize("bad", [{"timeoutMs": 0}, {"name": "has space"}, {"nope": 1},
                                 {"maxOutput": 10}])
def test_bad_shell_options(tmp_path, bad):
    from harness.errors import UsageError

    with pytest.raises(UsageError) as info:
        make_session(tmp_path, shell=bad)
    assert "shell" in str(info.value)


def test_shell_view_of_the_jail_adds_tmp_only(tmp_path):
    from harness.errors import FsError

    jail = Workspace(tmp_path / "work", {"/tmp": tmp_path / "tmp"})
    assert jail.resolve("/tmp/a").real == str((tmp_path / "tmp" / "a").resolve())
    assert jail.resolve("a").shown == "/work/a"
    for outside in ("/etc/passwd", "/", "/tmpx", "/tmp/../etc"):
        with pytest.raises(FsError):
            jail.resolve(outside)
