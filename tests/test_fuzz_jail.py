"""The jail under attack: a hand corpus of escape attempts against every Python entry point
(each h.fs operation, each built-in tool), plus generated paths (hypothesis).

Oracles, for every call: nothing outside the workspace is created, changed or removed;
no outside content comes back; only the documented errors come out (FsError from
h.fs, an error result from a tool); and an outside path that exists and one that does
not give the same answer (no existence oracle).
"""

import asyncio
import json
import os
import shutil
import time

import pytest
from fuzz_scale import fuzz_settings, report, scale
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import FsError
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolSet
from harness.workspace import fsops
from harness.workspace.jail import Workspace

SECRET = "TOP SECRET"

# Where the attempts aim: outside targets that exist (a twin that does not is made by
# replacing "secret" with "nosuch"), and the symbolic links planted inside.
TARGETS = [
    "../outside/secret.txt", "../outside", "..", "../..", "/", "/etc/passwd", "/etc",
    "/work/../outside/secret.txt", "/work/..", "/work/../..", "//etc/passwd", "///work/../x",
    "/work2/x", "/workx", "/work/./../outside/secret.txt", "work/../../outside/secret.txt",
    "a/../../outside/secret.txt", "./../outside/secret.txt", "/tmp/secret.txt",
    "/proc/self/root/etc/passwd", "~/secret.txt", "/work/d/../../outside/secret.txt",
    "out/secret.txt", "out", "secretlink", "d/up/outside/secret.txt", "d/up", "abs/passwd",
    "abs", "loop/x", "loop", "dangling", "d/deeper/link/secret.txt", "d/deeper/link",
    "out/../inside.txt", "d/up/ws/inside.txt", "/work/out/secret.txt",
    "/work/secretlink", "d/deeper/link/../outside/secret.txt", ".../outside/secret.txt",
]
SPELLINGS = [
    lambda p: p,
    lambda p: "./" + p.lstrip("/"),
    lambda p: p.replace("/", "//"),
    lambda p: p + "/",
    lambda p: p.replace("/", "\\"),                      # backslashes: plain characters
    lambda p: p.replace("..", "%2e%2e").replace("/", "%2f"),  # percent-encoding: literal
    lambda p: p.replace("..", "\u2024\u2024"),           # one-dot leaders
    lambda p: p.replace("..", "\uff0e\uff0e"),           # fullwidth full stops
    lambda p: p.replace("/", "\u2215"),                  # division slash
    lambda p: p.replace("/", "\uff0f"),                  # fullwidth solidus
    lambda p: p + "\x00.txt",                            # NUL: refused outright
    lambda p: "x" * 300 + "/../" + p,                    # a too-long name on the way
    lambda p: "/".join(["z"] * 300) + "/" + p,           # too deep before it
    lambda p: "\ud800/" + p,                             # a lone surrogate on the way
]
CORPUS = [spell(target) for target in TARGETS for spell in SPELLINGS]


def build(tmp):
    """tmp/outside (the secret), tmp/ws (the workspace) with links planted in it."""
    for name in ("ws", "outside"):
        shutil.rmtree(os.path.join(tmp, name), ignore_errors=True)
    outside = os.path.join(tmp, "outside")
    os.makedirs(os.path.join(outside, "dir"))
    with open(os.path.join(outside, "secret.txt"), "w") as f:
        f.write(SECRET)
    ws = os.path.join(tmp, "ws")
    os.makedirs(os.path.join(ws, "d", "deeper"))
    with open(os.path.join(ws, "inside.txt"), "w") as f:
        f.write("inside TOP\n")
    links = {"out": "../outside", "secretlink": "../outside/secret.txt", "d/up": "../..",
             "abs": "/etc", "loop": "loop", "dangling": "../outside/nosuch.txt",
             "d/deeper/link": "../../../outside"}
    for where, target in links.items():
        os.symlink(target, os.path.join(ws, where))
    return Workspace(ws)


def snapshot(tmp):
    """Everything outside the workspace, by path: type and content."""
    out = {}
    for directory, dirs, files in os.walk(tmp):
        dirs[:] = [d for d in dirs if not (directory == tmp and d == "ws")]
        for name in dirs + files:
            full = os.path.join(directory, name)
            if os.path.islink(full):
                out[full] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[full] = ("dir",)
            else:
                with open(full, "rb") as f:
                    out[full] = ("file", f.read())
    return out


def fs_calls(path):
    """(label, call) for every h.fs operation aimed at ``path``."""
    def req(**args):
        return lambda ws: fsops.dispatch(ws, fsops.parse_request(json.dumps(args)),
                                         b"pwned" if args["op"] == "writeFile" else None)
    return [
        ("fs.readFile", req(op="readFile", path=path)),
        ("fs.writeFile", req(op="writeFile", path=path)),
        ("fs.appendFile", req(op="writeFile", path=path, append=True)),
        ("fs.readdir", req(op="readdir", path=path)),
        ("fs.stat", req(op="stat", path=path)),
        ("fs.mkdir", req(op="mkdir", path=path)),
        ("fs.mkdir-p", req(op="mkdir", path=path, recursive=True)),
        ("fs.rm", req(op="rm", path=path)),
        ("fs.rm-rf", req(op="rm", path=path, recursive=True, force=True)),
        ("fs.rename-out", req(op="rename", **{"from": "inside.txt", "to": path})),
        ("fs.rename-in", req(op="rename", **{"from": path, "to": "moved"})),
    ]


def tool_calls(path):
    return [
        ("read", {"path": path}),
        ("write", {"path": path, "content": "pwned"}),
        ("edit", {"path": path, "edits": [{"oldText": "TOP", "newText": "pwned"}]}),
        ("ls", {"path": path}),
        ("grep", {"pattern": "SECRET", "path": path}),
        ("grep", {"pattern": "SECRET", "glob": path}),
        ("find", {"pattern": "*", "path": path}),
        ("find", {"pattern": path}),
    ]


class Attack:
    """Runs calls against a fresh jail and checks the oracles after each."""

    def __init__(self, tmp):
        self.tmp = str(tmp)
        self.tools = ToolSet(builtin_tools())
        self.calls = 0
        self.ws = build(self.tmp)
        self.before = snapshot(self.tmp)

    def reset(self):
        if self.calls:
            self.check_outside()
        self.ws = build(self.tmp)

    def fs(self, label, call, path):
        try:
            value = call(self.ws)
        except FsError as exc:
            answer = ("error", exc.code, exc.message)
        else:
            answer = ("ok", value)
        self.check(label, path, repr(answer))
        return answer

    async def tool(self, name, args, path):
        out = await self.tools.execute(name, json.dumps(args), ToolContext(self.ws))
        self.check(name, path, out.output)
        return (out.is_error, out.output)

    def check(self, label, path, shown):
        self.calls += 1
        assert SECRET not in shown, f"{label} {path!r} returned outside content: {shown[:200]}"
        self.last = (label, path)

    def check_outside(self):
        """Checked after each case's calls (a failure names the case's last call; rerun
        that case to find the call): nothing outside changed."""
        after = snapshot(self.tmp)
        assert after == self.before, f"after {self.last}: something outside the jail changed"


def twin(path):
    """The same path aimed at an outside file that does not exist (None: no twin)."""
    return path.replace("secret.txt", "nosuch.txt") if "secret.txt" in path else None


def same_answer(a, b, path, other):
    """Equal once the two names are swapped: the answer does not depend on existence."""
    return str(a).replace(other, path).replace("nosuch", "secret") == \
        str(b).replace("nosuch", "secret")


def test_hand_corpus_against_every_entry_point(tmp_path):
    assert len(CORPUS) >= 500
    attack = Attack(tmp_path)
    started = time.monotonic()
    oracle_pairs = 0

    async def run_all():
        nonlocal oracle_pairs
        for path in CORPUS:
            attack.reset()
            for label, call in fs_calls(path):
                attack.fs(label, call, path)
            for name, args in tool_calls(path):
                await attack.tool(name, args, path)
            other = twin(path)
            if other is None or ("\ud800" in path):
                continue
            # Read-only entry points, from a fresh jail: the same answer for both.
            attack.reset()
            for (label, call), (_, call2) in zip(fs_calls(path), fs_calls(other), strict=True):
                if label in ("fs.readFile", "fs.stat", "fs.readdir"):
                    a, b = attack.fs(label, call, path), attack.fs(label, call2, other)
                    assert same_answer(a, b, path, other), (label, path, a, b)
                    oracle_pairs += 1
            for name, args in [tool_calls(path)[0], tool_calls(path)[3]]:
                a = await attack.tool(name, args, path)
                b = await attack.tool(name, {**args, "path": other}, other)
                assert same_answer(a, b, path, other), (name, path, a, b)
                oracle_pairs += 1

    asyncio.run(run_all())
    attack.check_outside()
    assert attack.calls >= 500 * 19
    report("jail-hand-corpus", cases=len(CORPUS), entry_points=len(fs_calls("x"))
           + len(tool_calls("x")), calls=attack.calls, existence_pairs=oracle_pairs,
           escapes=0, seconds=round(time.monotonic() - started, 1))


SEGMENTS = ["..", ".", "", "work", "outside", "secret.txt", "nosuch.txt", "out", "secretlink",
            "d", "up", "deeper", "link", "abs", "passwd", "etc", "loop", "dangling", "\x00",
            "\\", "%2e%2e", "\u2024\u2024", "\uff0e\uff0e", "~", "inside.txt", "x" * 256]
generated = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "/", "//", "/work/", "./"]),
    st.lists(st.one_of(st.sampled_from(SEGMENTS), st.text(max_size=4)), max_size=8),
)


@pytest.fixture
def attack(tmp_path):
    return Attack(tmp_path)


def test_generated_paths(attack):
    counts = {"paths": 0, "existence_pairs": 0}
    started = time.monotonic()

    @fuzz_settings(short=300, long=12_000)
    @given(generated)
    def check(path):
        counts["paths"] += 1
        attack.reset()
        other = twin(path)
        if other is not None:  # read-only first, from a fresh jail: no existence oracle
            for (label, call), (_, call2) in zip(fs_calls(path), fs_calls(other), strict=True):
                if label in ("fs.readFile", "fs.stat", "fs.readdir"):
                    a, b = attack.fs(label, call, path), attack.fs(label, call2, other)
                    assert same_answer(a, b, path, other), (label, path, a, b)
                    counts["existence_pairs"] += 1
        for label, call in fs_calls(path):
            attack.fs(label, call, path)
        for name, args in tool_calls(path)[:4]:
            # asyncio.run, not one loop's run_until_complete: it finishes what a call left
            # scheduled before it returns (in Pyodide, a WebLoop's leftover callback ran
            # after the tier's last test: "loop ... is not the running loop").
            asyncio.run(attack.tool(name, args, path))

    check()
    attack.check_outside()
    assert counts["paths"] >= scale(300, 10_000)
    report("jail-generated", paths=counts["paths"], calls=attack.calls, escapes=0,
           existence_pairs=counts["existence_pairs"],
           seconds=round(time.monotonic() - started, 1))
