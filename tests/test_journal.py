"""The change journal (harness/workspace/journal.py): its numbering, bounds and per-call sets, and
that it records every change from every source, with its cause.

Two tiers run this file. On CPython the journal is fed by ScanFeed (a look at the tree
per drain: there is no hook on a real filesystem). In the in-Pyodide tier it is fed by
the worker's own feed over Pyodide's MEMFS (embed/worker/journal.mjs over
embed/shared/fs-hooks.mjs), exactly as in the browser: there the raw records are checked
too (order, kinds, no scan at all)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.agent import RunContext
from harness.runtime.native import NativeRuntime
from harness.runtime.scan_feed import ScanFeed
from harness.session import Session
from harness.workspace.journal import Before, Journal
from harness.workspace.sandbox import Changes, SandboxView

IN_PYODIDE = sys.platform == "emscripten"


class ListFeed:
    """A feed the test writes to: for the journal's own rules (numbering, bounds, the
    per-call sets), apart from where changes come from."""

    def __init__(self) -> None:
        self.raw: list[tuple[str, str, str | None, str]] = []
        self.lost = False
        self.cause = ""

    def add(self, kind: str, path: str, source: str | None = None) -> None:
        self.raw.append((kind, path, source, self.cause))

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]:
        out, lost = self.raw, self.lost
        self.raw, self.lost = [], False
        return out, lost

    def set_cause(self, cause: str, capture: bool = False) -> None:
        self.cause = cause

    def new_epoch(self) -> None:
        pass

    def befores(self) -> list[Before]:
        return []


# -- the journal's rules -----------------------------------------------------------


def test_changes_are_numbered_in_order_and_read_from_a_position() -> None:
    feed = ListFeed()
    journal = Journal(feed)
    reader = journal.reader()
    feed.add("created", "/work/a")
    feed.add("modified", "/work/a")
    changes = journal.since(reader.position)
    assert changes is not None
    assert [(c.seq, c.kind, c.path) for c in changes] == [(0, "created", "/work/a"),
                                                          (1, "modified", "/work/a")]
    assert journal.position == 2 and journal.since(2) == []
    assert journal.since(3) is None  # a position the journal never gave


def test_a_reader_too_far_behind_gets_a_resync() -> None:
    feed = ListFeed()
    journal = Journal(feed, capacity=3)
    reader = journal.reader()
    for i in range(5):
        feed.add("created", f"/work/{i}")
    assert journal.since(reader.position) is None  # two were dropped
    reader.position = journal.position
    feed.add("deleted", "/work/0")
    assert [c.path for c in journal.since(reader.position) or []] == ["/work/0"]


def test_lost_changes_resync_every_reader() -> None:
    feed = ListFeed()
    journal = Journal(feed)
    reader = journal.reader()
    feed.lost = True  # the feed dropped some (too many between two drains)
    assert journal.since(reader.position) is None
    reader.position = journal.position
    assert journal.since(reader.position) == []


def test_what_every_reader_has_read_is_forgotten() -> None:
    feed = ListFeed()
    journal = Journal(feed)
    for i in range(100):
        feed.add("created", f"/work/{i}")
    assert journal.position == 100 and len(journal._changes) == 0  # no reader: none kept
    reader = journal.reader()
    feed.add("created", "/work/x")
    assert len(journal.since(reader.position) or []) == 1
    reader.position = journal.position
    journal.position  # noqa: B018 (a look trims)
    assert len(journal._changes) == 0
    del reader
    assert journal.since(0) is None


def test_one_calls_changes_as_a_set_of_net_kinds() -> None:
    feed = ListFeed()
    journal = Journal(feed)
    with journal.cause("call_1"):
        feed.add("created", "/work/new")
        feed.add("modified", "/work/new")
        feed.add("created", "/work/tmp")
        feed.add("deleted", "/work/tmp")
        feed.add("modified", "/work/old")
        feed.add("renamed", "/work/moved", "/work/was")
        # a write through a temporary file: made, then moved over the file it replaces
        feed.add("created", "/work/.pyharness-x")
        feed.add("deleted", "/work/kept")
        feed.add("renamed", "/work/kept", "/work/.pyharness-x")
        feed.add("dir_created", "/work/d")
        feed.add("mode_changed", "/work/m")
        # moved away and then deleted: the source is gone, the target never was
        feed.add("renamed", "/work/brief", "/work/gone")
        feed.add("deleted", "/work/brief")
    with journal.cause("page:writeFile:7"):
        feed.add("created", "/work/p")
    assert journal.of("call_1") == {
        "/work/new": "created", "/work/old": "modified", "/work/moved": "renamed",
        "/work/was": "deleted", "/work/kept": "modified", "/work/d": "dir_created",
        "/work/m": "mode_changed", "/work/gone": "deleted",
    }
    assert journal.of("page:writeFile:7") == {"/work/p": "created"}
    assert journal.of("nobody") == {}


def test_causes_nest_and_are_restored() -> None:
    feed = ListFeed()
    journal = Journal(feed)
    with journal.cause("call_1"):
        with journal.cause("page:rm:3"):
            feed.add("deleted", "/work/a")
        feed.add("created", "/work/b")
    feed.add("created", "/work/c")
    assert [c.cause for c in journal.since(0) or []] == []  # no reader: none kept
    assert journal.of("page:rm:3") == {"/work/a": "deleted"}
    assert journal.of("call_1") == {"/work/b": "created"} and feed.cause == ""


# -- every source, over the tier's real feed ------------------------------------------


class Feeds:
    """Where the workspace is and how its journal is fed, in this tier."""

    def __init__(self, tmp_path: Path) -> None:
        if IN_PYODIDE:
            self.root = "/work"
            shutil.rmtree(self.root, ignore_errors=True)
            os.makedirs(self.root)
        else:
            self.root = str(tmp_path / "work")
            os.makedirs(self.root)
        self._stop: list[Any] = []

    def journal(self) -> Journal:
        if not IN_PYODIDE:
            return Journal(ScanFeed(self.root))
        import js  # type: ignore[import-not-found]
        import pyodide_js  # type: ignore[import-not-found]

        from harness.runtime.pyodide import JsFeed

        feed = js.pyharnessWorker.journalFeed(pyodide_js.FS)
        self._stop.append(feed)
        return Journal(JsFeed(feed))

    def close(self) -> None:
        for feed in self._stop:
            feed.stop()


@pytest.fixture
def feeds(tmp_path: Path) -> Iterator[Feeds]:
    f = Feeds(tmp_path)
    yield f
    f.close()


class JournalRuntime(NativeRuntime):
    def __init__(self, root: str, journal: Journal) -> None:
        super().__init__(root)
        self._journal = journal


def session_over(feeds: Feeds, turns: list[dict[str, Any]] | None = None) -> Session:
    config = json.dumps({"model": {"api": "scripted", "turns": turns or []}})
    return Session.from_options(config, JournalRuntime(feeds.root, feeds.journal()))


def fs(session: Session, op: str, data: bytes | None = None, **args: Any) -> Any:
    """One h.fs call, its changes recorded as "page:<op>" (the worker's causes also
    carry the request's id)."""
    reply = session.fs(json.dumps({"op": op, **args}), data, f"page:{op}")
    assert not isinstance(reply, bytes)
    out = json.loads(reply)
    assert out["ok"], out
    return out.get("value")


def test_calls_run_at_once_keep_their_own_causes(feeds: Feeds) -> None:
    """Two calls in tasks of their own (subagents' calls, run at once), switching back and
    forth between their writes: each change is its own call's, on the tier's real feed."""
    from harness.agent import _at_once

    journal = feeds.journal()
    reader = journal.reader()

    async def call(name: str) -> Any:
        with journal.cause(name, capture=True):
            for i in range(3):
                await asyncio.sleep(0)  # the other task runs here
                Path(feeds.root, f"{name}-{i}.txt").write_text(name)
        return name

    async def both() -> Any:
        return await _at_once([call("A"), call("B")], [journal.resume])

    assert asyncio.run(both()) == ["A", "B"]
    assert sorted(journal.of("A")) == [f"/work/A-{i}.txt" for i in range(3)]
    assert sorted(journal.of("B")) == [f"/work/B-{i}.txt" for i in range(3)]
    assert {c.source for c in journal.since(reader.position) or []} == {None}  # not renames


def test_each_page_call_is_one_set_under_its_cause(feeds: Feeds) -> None:
    s = session_over(feeds)
    journal = s.journal
    reader = journal.reader()
    fs(s, "writeFile", b"a", path="a.txt")
    fs(s, "mkdir", path="d/e", recursive=True)
    fs(s, "rename", **{"from": "a.txt", "to": "d/b.txt"})
    fs(s, "writeFile", b"more", path="d/b.txt", append=True)
    fs(s, "rm", path="d", recursive=True)
    assert journal.of("page:writeFile") == {"/work/d/b.txt": "modified"}  # the last call
    assert journal.of("page:mkdir") == {"/work/d": "dir_created", "/work/d/e": "dir_created"}
    assert journal.of("page:rm") == {"/work/d": "dir_deleted", "/work/d/e": "dir_deleted",
                                     "/work/d/b.txt": "deleted"}
    rename = journal.of("page:rename")
    if IN_PYODIDE:  # the hooks see the rename itself, and each removal in order
        assert rename == {"/work/d/b.txt": "renamed", "/work/a.txt": "deleted"}
        raw = [(c.kind, c.path) for c in journal.since(reader.position) or []
               if c.cause.startswith("page:rm")]
        assert sorted(raw) == [("deleted", "/work/d/b.txt"), ("dir_deleted", "/work/d"),
                               ("dir_deleted", "/work/d/e")]
        assert raw[-1] == ("dir_deleted", "/work/d")  # what was inside went first
    else:  # a look at the tree sees one gone and one new
        assert rename == {"/work/d/b.txt": "created", "/work/a.txt": "deleted"}


def test_tool_calls_and_imports_are_recorded_under_their_causes(feeds: Feeds) -> None:
    turns = [
        {"toolCalls": [{"name": "write",
                        "arguments": {"path": "src/app.py", "content": "print(1)\n"}}]},
        {"toolCalls": [{"name": "edit",
                        "arguments": {"path": "src/app.py",
                                      "edits": [{"oldText": "1", "newText": "2"}]}}]},
        {"text": "done"},
    ]
    s = session_over(feeds, turns)  # the scripted model numbers its calls call_1, call_2

    result = asyncio.run(s.agent.run("go", RunContext("r1"), lambda event: None))
    assert result.stop_reason == "stop"
    assert s.journal.of("call_1") == {"/work/src": "dir_created", "/work/src/app.py": "created"}
    assert s.journal.of("call_2") == {"/work/src/app.py": "modified"}
    reply = s.fs(json.dumps({"op": "exportZip"}))
    assert isinstance(reply, bytes)
    fs(s, "importZip", reply, replace=True)
    changed = s.journal.of("page:importZip")
    assert changed.get("/work/src/app.py") in ("modified", "created", "renamed")


def test_a_commands_changes_are_recorded_under_its_call(feeds: Feeds) -> None:
    s = session_over(feeds)
    view = SandboxView(s.workspace, s.journal)
    view.outgoing()
    with s.journal.cause("call_sh"):
        notes = view.apply(Changes(dirs=["/work/out"], files=[("/work/out/r.txt", b"r")]),
                           budget=1024)
    assert notes == []
    assert s.journal.of("call_sh") == {"/work/out": "dir_created", "/work/out/r.txt": "created"}
    assert view.outgoing().files == []  # the sandbox made them: nothing to send back


# -- replaying the journal gives the tree ------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
OPS = st.one_of(
    st.tuples(st.just("writeFile"), PATHS, st.binary(max_size=8)),
    st.tuples(st.just("append"), PATHS, st.binary(min_size=1, max_size=4)),
    st.tuples(st.just("mkdir"), PATHS),
    st.tuples(st.just("rm"), PATHS),
    st.tuples(st.just("rename"), PATHS, PATHS),
)


def tree(root: str) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for here, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(here, name), root)] = None
        for name in files:
            with open(os.path.join(here, name), "rb") as f:
                out[os.path.relpath(os.path.join(here, name), root)] = f.read()
    return out


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(start=st.lists(OPS, max_size=6), ops=st.lists(OPS, max_size=20))
def test_replaying_the_journal_over_the_start_gives_the_end(start: list[Any],
                                                             ops: list[Any]) -> None:
    """Whatever the page does (some calls fail: a missing parent, a file in the way),
    the start tree plus the journal's changes, each path taken as it is at the end,
    is the end tree. This is what the sandbox's sync relies on."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        feeds = Feeds(Path(tmp))
        try:
            s = session_over(feeds)
            for op in start:
                apply_op(s, op)
            copy = tree(feeds.root)
            reader = s.journal.reader()
            for op in ops:
                apply_op(s, op)
            changes = s.journal.since(reader.position)
            assert changes is not None
            end = tree(feeds.root)
            touched: set[str] = set()
            for change in changes:
                touched.add(change.path)
                if change.source:
                    touched.add(change.source)
            for path in sorted(touched, key=lambda p: p.count("/")):
                rel = path.removeprefix("/work/")
                for key in [k for k in copy if k == rel or k.startswith(rel + "/")]:
                    del copy[key]
                copy.update({k: v for k, v in end.items() if k == rel or k.startswith(rel + "/")})
            assert copy == end
        finally:
            feeds.close()


def apply_op(s: Session, op: tuple[Any, ...]) -> None:
    kind, path, *rest = op
    if kind == "writeFile":
        request, data = {"op": "writeFile", "path": path}, rest[0]
    elif kind == "append":
        request, data = {"op": "writeFile", "path": path, "append": True}, rest[0]
    elif kind == "mkdir":
        request, data = {"op": "mkdir", "path": path, "recursive": True}, None
    elif kind == "rm":
        request, data = {"op": "rm", "path": path, "recursive": True}, None
    else:
        request, data = {"op": "rename", "from": path, "to": rest[0]}, None
    s.fs(json.dumps(request), data)  # an error reply is fine: it changed nothing


# -- the sandbox's copy follows the journal ----------------------------------------

COMMANDS = st.lists(st.one_of(
    st.tuples(st.just("write"), PATHS, st.binary(max_size=6)),
    st.tuples(st.just("mkdir"), PATHS),
    st.tuples(st.just("rm"), PATHS),
), max_size=4)
STEPS = st.lists(st.one_of(
    st.tuples(st.just("page"), OPS),
    st.tuples(st.just("tool"), PATHS, st.binary(max_size=6)),
    st.tuples(st.just("command"), COMMANDS),
), max_size=12)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(steps=STEPS)
def test_the_sandboxs_copy_equals_the_workspace_with_one_walk(steps: list[Any]) -> None:
    """Page writes, tool writes and commands in any order: before each command the
    sandbox gets what the journal says changed, and its copy is the workspace. Only the
    first sync walks the tree."""
    import tempfile

    from test_sandbox import Copy

    with tempfile.TemporaryDirectory() as tmp:
        feeds = Feeds(Path(tmp))
        try:
            s = session_over(feeds)
            view = SandboxView(s.workspace, s.journal)
            copy = Copy(Path(tmp) / "sandbox")
            for n, step in enumerate(steps):
                if step[0] == "page":
                    apply_op(s, step[1])
                elif step[0] == "tool":
                    with s.journal.cause(f"call_{n}"):
                        s.fs(json.dumps({"op": "writeFile", "path": step[1]}), step[2])
                else:
                    copy.load(view.outgoing())
                    assert tree(copy.root) == tree(feeds.root)
                    run_command(copy, step[1])
                    with s.journal.cause(f"call_{n}"):
                        view.apply(copy.collect(), budget=10**6)
            copy.load(view.outgoing())
            assert tree(copy.root) == tree(feeds.root)
            assert view.full_syncs == 1  # the one walk of the tree: the first copy
        finally:
            feeds.close()


def run_command(copy: Any, actions: list[tuple[Any, ...]]) -> None:
    """What a command might do to the sandbox's /work (mkdir -p, a write, rm -rf)."""
    for kind, path, *rest in actions:
        real = copy.root / path
        if kind == "mkdir":
            if not any(p.exists() and not p.is_dir() for p in [real, *real.parents]):
                real.mkdir(parents=True, exist_ok=True)
        elif kind == "write":
            if real.parent.is_dir() and not real.is_dir():
                real.write_bytes(rest[0])
        elif real.is_dir():
            shutil.rmtree(real)
        elif real.exists():
            real.unlink()


# -- file_change events: what the page hears -----------------------------------------


def test_each_call_tells_the_page_what_it_changed_before_it_ends(feeds: Feeds) -> None:
    turns = [
        {"toolCalls": [{"name": "write", "arguments": {"path": "src/a.py", "content": "x = 1\n"}}]},
        {"toolCalls": [{"name": "edit", "arguments": {
            "path": "src/a.py", "edits": [{"oldText": "1", "newText": "2"}]}}]},
        {"text": "done"},
    ]
    s = session_over(feeds, turns)
    runtime = s.runtime
    assert isinstance(runtime, NativeRuntime)
    asyncio.run(s.agent.run("go", RunContext("r1"), s._post_event))
    seen = [(m["type"], m.get("path"), m.get("kind"), m.get("callId"), m.get("tool"))
            for m in runtime.messages if m["type"] in ("file_change", "tool_end")]
    assert seen == [
        ("file_change", "/work/src", "created", "call_1", "write"),
        ("file_change", "/work/src/a.py", "created", "call_1", "write"),
        ("tool_end", None, None, "call_1", None),
        ("file_change", "/work/src/a.py", "modified", "call_2", "edit"),
        ("tool_end", None, None, "call_2", None),
    ]
    first = next(m for m in runtime.messages if m["type"] == "file_change")
    assert first["runId"] == "r1" and first["entry"] == "dir" and first["size"] is None
    assert [m["seq"] for m in runtime.messages if m["type"] == "file_change"] == [0, 1, 2]
    runtime.messages.clear()

    fs(s, "writeFile", b"hello", path="src/b.txt")
    fs(s, "rename", **{"from": "src/b.txt", "to": "c.txt"})
    fs(s, "rm", path="src", recursive=True)
    assert s.fs(json.dumps({"op": "readFile", "path": "c.txt"})) == b"hello"  # tells nothing
    assert [m["seq"] for m in runtime.messages] == list(range(3, 3 + len(runtime.messages)))
    changes = [{k: m[k] for k in ("path", "kind", "from", "entry", "size", "runId", "callId",
                                  "tool")} for m in runtime.messages]
    page = {"runId": None, "callId": None, "tool": None}
    renamed = {"path": "/work/c.txt", "kind": "renamed", "from": "/work/src/b.txt",
               "entry": "file", "size": 5, **page}
    if not IN_PYODIDE:  # a look at the tree sees one gone and one new
        renamed = {**renamed, "kind": "created", "from": None}
    assert changes[0] == {"path": "/work/src/b.txt", "kind": "created", "from": None,
                          "entry": "file", "size": 5, **page}
    assert changes[1] == renamed
    if not IN_PYODIDE:
        assert changes[2]["path"] == "/work/src/b.txt" and changes[2]["kind"] == "deleted"
        changes = changes[1:]
    assert sorted((c["path"], c["kind"], c["entry"]) for c in changes[2:]) == [
        ("/work/src", "deleted", "dir"), ("/work/src/a.py", "deleted", "file")]
