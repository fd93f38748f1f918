"""Checkpoints (harness/workspace/checkpoints.py) over the change journal's CPython feed: a run's
changes are taken back exactly (contents, deletions, renames, empty folders, binary
files, modes), a revert is refused whole on a conflict, a revert is itself revertable,
and checkpoints survive a new process over the same storage. The property test drives
random runs and reverts them newest first: the tree is as it was, every time; and random
interleavings of runs, the page's edits (during runs too), reverts, rewinds and reopens:
a revert restores exactly the pre-images or changes nothing, and never takes back the
page's edit. (The same file runs in the in-Pyodide tier, over Emscripten's MEMFS.)"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import FsError
from harness.runtime.scan_feed import ScanFeed
from harness.workspace.checkpoints import Checkpoints
from harness.workspace.journal import Journal

PROPERTY_EXAMPLES = int(os.environ.get("PYHARNESS_CHECKPOINT_EXAMPLES", "200"))


class Bench:
    """A workspace, its journal and its checkpoints; ``run`` is a run whose calls each
    do one thing (as the agent's tool calls do, under their own cause, capturing)."""

    def __init__(self, root: str, store: str | None = None) -> None:
        self.root = root
        self.journal = Journal(ScanFeed(root))
        _ = self.journal.position  # the first look
        self.cps = Checkpoints(self.journal, root, store)
        self.runs = 0
        self.pages = 0

    def real(self, rel: str) -> str:
        return os.path.join(self.root, rel)

    def run(self, *ops) -> str:
        """A run; an op wrapped in :class:`Page` is the page's, made while the run goes on."""
        self.runs += 1
        run_id = f"run-{self.runs}"
        self.cps.begin(run_id)
        for i, op in enumerate(ops):
            if isinstance(op, Page):
                self.page(op.op)
                continue
            with self.journal.cause(f"{run_id}-call_{i}", capture=True):
                op(self)
        self.cps.end(run_id)
        return run_id

    def page(self, op) -> None:
        self.pages += 1
        with self.journal.cause(f"page:writeFile:{self.pages}"):
            op(self)


class Page:
    """A page's change (h.fs) made while a run goes on: ``bench.run(w1, Page(w2), w3)``."""

    def __init__(self, op) -> None:
        self.op = op


def tree(root: str) -> dict[str, tuple]:
    """Everything below ``root``: kind, mode and (a file's) content digest."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            info = os.lstat(full)
            rel = os.path.relpath(full, root)
            if stat.S_ISDIR(info.st_mode):
                out[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                with open(full, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(info.st_mode),
                                hashlib.sha256(f.read()).hexdigest())
    return out


def write(rel, data):
    def op(b):
        os.makedirs(os.path.dirname(b.real(rel)) or b.root, exist_ok=True)
        with open(b.real(rel), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
    return op


def remove(rel):
    return lambda b: os.unlink(b.real(rel))


def rename(a, c):
    return lambda b: os.rename(b.real(a), b.real(c))


def mkdir(rel):
    return lambda b: os.makedirs(b.real(rel), exist_ok=True)


def rmtree(rel):
    def op(b):
        import shutil
        shutil.rmtree(b.real(rel))
    return op


def chmod(rel, mode):
    return lambda b: os.chmod(b.real(rel), mode)


@pytest.fixture
def bench(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "keep.txt").write_text("kept\n")
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("print('a')\n")
    (root / "src" / "b.bin").write_bytes(bytes(range(256)))
    (root / "empty").mkdir()
    return Bench(str(root), str(tmp_path / "state" / "checkpoints"))


def test_a_run_is_taken_back_exactly_and_the_revert_redone(bench):
    start = tree(bench.root)
    run = bench.run(
        write("src/a.py", "print('changed')\n"),
        remove("keep.txt"),
        rename("src/b.bin", "moved.bin"),
        mkdir("new/deep/er"),
        rmtree("empty"),
        write("new/deep/x.bin", b"\0\1\2" * 1000),
        chmod("src/a.py", 0o755),
    )
    after = tree(bench.root)
    plan = bench.cps.revert(run, dry_run=True)
    assert tree(bench.root) == after  # a dry run changes nothing
    kinds = {c["path"]: c["kind"] for c in plan["changes"]}
    assert kinds["/work/keep.txt"] == "created" and kinds["/work/moved.bin"] == "deleted"
    assert kinds["/work/src/a.py"] == "modified" and kinds["/work/empty"] == "created"
    result = bench.cps.revert(run)
    assert tree(bench.root) == start
    assert result["reverted"] == [run] and result["revertId"].startswith("revert:")
    with pytest.raises(FsError) as again:
        bench.cps.revert(run)
    assert again.value.code == "EINVAL" and "reverted already" in str(again.value)
    bench.cps.revert(result["revertId"])  # the redo
    assert tree(bench.root) == after
    bench.cps.revert(run)  # and back again: the run is revertable once more
    assert tree(bench.root) == start


def test_a_later_change_is_a_conflict_and_nothing_is_reverted(bench):
    first = bench.run(write("src/a.py", "one\n"), write("notes.md", "n\n"))
    bench.page(write("src/a.py", "the user's edit\n"))
    now = tree(bench.root)
    with pytest.raises(FsError) as refused:
        bench.cps.revert(first)
    assert refused.value.code == "ECONFLICT" and "/work/src/a.py" in str(refused.value)
    assert "notes.md" not in str(refused.value)
    assert tree(bench.root) == now  # not half-reverted
    with pytest.raises(FsError):  # a cascade cannot take back the page's change either
        bench.cps.revert(first, cascade=True)
    assert tree(bench.root) == now


def test_a_new_file_in_a_folder_the_run_made_is_a_conflict(bench):
    run = bench.run(mkdir("made"), write("made/by-run.txt", "r"))
    bench.page(write("made/by-page.txt", "p"))
    with pytest.raises(FsError) as refused:
        bench.cps.revert(run)
    assert "by-page.txt" in str(refused.value)
    assert os.path.exists(bench.real("made/by-page.txt"))


def test_cascade_reverts_the_later_runs_first(bench):
    start = tree(bench.root)
    first = bench.run(write("src/a.py", "first\n"))
    middle = bench.run(write("other.txt", "unrelated\n"))
    last = bench.run(write("src/a.py", "last\n"), rename("src/a.py", "src/c.py"))
    with pytest.raises(FsError) as refused:
        bench.cps.revert(first)
    assert refused.value.code == "ECONFLICT" and "cascade" in str(refused.value)
    result = bench.cps.revert(first, cascade=True)
    assert result["reverted"] == [last, first]  # newest first; the middle run untouched
    expected = dict(start)
    expected["other.txt"] = tree(bench.root)["other.txt"]
    assert tree(bench.root) == expected
    listing = {c["runId"]: c["revertedBy"] for c in bench.cps.listing()}
    assert listing[first] == listing[last] == result["revertId"] and listing[middle] is None


def test_diff_names_each_path_with_sizes_and_a_text_diff(bench):
    run = bench.run(write("src/a.py", "print('b')\n"), remove("keep.txt"),
                    write("img.bin", b"\x89PNG\0\0"))
    diff = {d["path"]: d for d in bench.cps.diff(run)}
    assert diff["/work/src/a.py"]["kind"] == "modified"
    assert "-print('a')" in diff["/work/src/a.py"]["diff"]
    assert "+print('b')" in diff["/work/src/a.py"]["diff"]
    assert diff["/work/keep.txt"]["kind"] == "deleted"
    assert diff["/work/keep.txt"]["sizeBefore"] == 5 and diff["/work/keep.txt"]["sizeAfter"] is None
    assert diff["/work/img.bin"]["kind"] == "created" and diff["/work/img.bin"]["diff"] is None
    assert diff["/work/img.bin"]["sizeAfter"] == 6


def test_checkpoints_survive_a_new_process_over_the_same_store(bench, tmp_path):
    start = tree(bench.root)
    run = bench.run(write("src/a.py", "x\n"), remove("src/b.bin"))
    again = Bench(bench.root, str(tmp_path / "state" / "checkpoints"))
    assert [c["runId"] for c in again.cps.listing()] == [run]
    again.cps.revert(run)
    assert tree(bench.root) == start


def test_a_run_that_fell_out_of_the_budget_says_so(bench, monkeypatch):
    import harness.workspace.checkpoints as cp
    monkeypatch.setattr(cp, "MAX_CHECKPOINTS", 2)
    runs = [bench.run(write(f"f{i}.txt", str(i))) for i in range(3)]
    with pytest.raises(FsError) as gone:
        bench.cps.revert(runs[0])
    assert gone.value.code == "ENOENT" and "no longer kept" in str(gone.value)
    bench.cps.revert(runs[2])
    assert not os.path.exists(bench.real("f2.txt"))
    blobs = os.path.join(os.path.dirname(bench.root), "state", "checkpoints", "blobs")
    assert not os.path.exists(blobs) or all(len(os.listdir(os.path.join(blobs, d))) <= 3
                                            for d in os.listdir(blobs))


def test_a_run_that_changed_nothing_has_no_checkpoint(bench):
    run = bench.run(write("t.txt", "x"), remove("t.txt"))
    with pytest.raises(FsError) as none:
        bench.cps.revert(run)
    assert none.value.code in ("ENOENT", "EINVAL")


def test_an_unreadable_index_is_no_checkpoints_not_a_failure(bench, tmp_path):
    run = bench.run(write("a.txt", "a"))
    index = tmp_path / "state" / "checkpoints" / "index.json"
    index.write_text("{not json")
    again = Bench(bench.root, str(index.parent))
    assert again.cps.listing() == []
    with pytest.raises(FsError):
        again.cps.revert(run)
    json.loads(json.dumps(again.cps.listing()))


def test_the_pages_edit_during_a_run_is_a_conflict_no_cascade_resolves(bench):
    run = bench.run(write("src/a.py", "by the run\n"), Page(write("src/a.py", "the user's\n")),
                    write("notes.md", "n\n"))
    now = tree(bench.root)
    for cascade in (False, True):
        with pytest.raises(FsError) as refused:
            bench.cps.revert(run, cascade=cascade)
        assert refused.value.code == "ECONFLICT" and "/work/src/a.py" in str(refused.value)
        assert "notes.md" not in str(refused.value) and "force" in str(refused.value)
        assert tree(bench.root) == now  # nothing reverted, the user's edit intact
    assert {d["path"]: d["changedSince"] for d in bench.cps.diff(run)}["/work/src/a.py"]
    # force takes it back anyway, and reverting that revert brings the user's edit back
    forced = bench.cps.revert(run, force=True)
    assert (Path(bench.root) / "src" / "a.py").read_text() == "print('a')\n"
    bench.cps.revert(forced["revertId"])
    assert tree(bench.root) == now


def test_the_pages_edit_before_the_run_touched_the_path_is_its_pre_image(bench):
    run = bench.run(write("notes.md", "n\n"), Page(write("src/a.py", "the user's\n")),
                    write("src/a.py", "by the run\n"))
    bench.cps.revert(run)
    assert (Path(bench.root) / "src" / "a.py").read_text() == "the user's\n"
    assert not (Path(bench.root) / "notes.md").exists()


def test_the_pages_file_in_a_folder_the_run_made_during_the_run_is_a_conflict(bench):
    run = bench.run(mkdir("made"), Page(write("made/page.txt", "p")), write("made/r.txt", "r"))
    with pytest.raises(FsError) as refused:
        bench.cps.revert(run)
    assert "/work/made/page.txt" in str(refused.value)
    assert (Path(bench.root) / "made" / "page.txt").read_text() == "p"


def test_a_page_edit_after_the_run_counts_even_when_it_puts_the_same_bytes_back(bench, tmp_path):
    """What the page changed after the run is told by the journal, not guessed from the
    content: the page writing the run's own text again is still the page's edit, and a
    reopened workspace still knows it (marks.jsonl)."""
    run = bench.run(write("src/a.py", "by the run\n"))
    bench.page(write("src/a.py", "the user's\n"))
    bench.page(write("src/a.py", "by the run\n"))
    for b in (bench, Bench(bench.root, str(tmp_path / "state" / "checkpoints"))):
        with pytest.raises(FsError) as refused:
            b.cps.revert(run)
        assert refused.value.code == "ECONFLICT" and "/work/src/a.py" in str(refused.value)
    assert (Path(bench.root) / "src" / "a.py").read_text() == "by the run\n"


def test_a_tool_call_named_like_a_page_call_cannot_hide_the_pages_edit(bench):
    """The model names its tool calls: one named as the page's next h.fs call would make
    the page's edit look like the run's. The cause counts both ways: a conflict."""
    run_id = "run-x"
    bench.cps.begin(run_id)
    with bench.journal.cause("page:writeFile:1", capture=True):
        write("src/a.py", "by the run\n")(bench)
    bench.page(write("src/a.py", "the user's\n"))  # cause "page:writeFile:1" again
    bench.cps.end(run_id)
    with pytest.raises(FsError) as refused:
        bench.cps.revert(run_id)
    assert refused.value.code == "ECONFLICT"
    assert (Path(bench.root) / "src" / "a.py").read_text() == "the user's\n"


def test_a_run_during_which_the_journal_lost_count_is_reverted_only_by_force(bench):
    """More changes at once than the feed keeps: who made them is unknown, so nothing
    of the run is known to be its alone (the journal tells its watchers None)."""
    bench.cps.begin("run-lost")
    with bench.journal.cause("call-1", capture=True):
        write("src/a.py", "by the run\n")(bench)
    bench.cps._observe(None)  # what Journal._pull tells on a feed's lost drain
    bench.cps.end("run-lost")
    with pytest.raises(FsError) as refused:
        bench.cps.revert("run-lost")
    assert refused.value.code == "ECONFLICT" and "unknown" in str(refused.value)
    bench.cps.revert("run-lost", force=True)
    assert (Path(bench.root) / "src" / "a.py").read_text() == "print('a')\n"


def test_a_second_run_on_the_same_path_is_a_conflict_unless_cascade(bench):
    first = bench.run(write("src/a.py", "first\n"))
    second = bench.run(write("src/a.py", "second\n"))
    with pytest.raises(FsError) as refused:
        bench.cps.revert(first)
    assert refused.value.code == "ECONFLICT" and "cascade" in str(refused.value)
    assert bench.cps.revert(first, cascade=True)["reverted"] == [second, first]
    assert (Path(bench.root) / "src" / "a.py").read_text() == "print('a')\n"


def test_a_name_with_a_newline_cannot_forge_lines_of_the_diff(bench):
    name = "x.txt\n+++ forged\n@@ -1 +1 @@\n+evil"
    run = bench.run(write(name, "one\n"))
    [entry] = bench.cps.diff(run)
    lines = entry["diff"].split("\n")
    assert lines[0] == "--- /dev/null"
    assert lines[1] == '+++ "b/x.txt\\n+++ forged\\n@@ -1 +1 @@\\n+evil"'
    assert lines[2:] == ["@@ -0,0 +1 @@", "+one"]


# -- the property ---------------------------------------------------------------------

NAMES = ["a", "b", "c", "d/e", "d/f", "g/h/i"]
_op = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES),
              st.one_of(st.text(max_size=40), st.binary(max_size=64))),
    st.tuples(st.just("remove"), st.sampled_from(NAMES)),
    st.tuples(st.just("rename"), st.sampled_from([*NAMES, "d", "g"]),
              st.sampled_from([*NAMES, "d", "g", "x", "y/z"])),
    st.tuples(st.just("mkdir"), st.sampled_from(["d", "g/h", "k", "k/l"])),
    st.tuples(st.just("rmtree"), st.sampled_from(["d", "g", "k"])),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES), st.sampled_from([0o644, 0o600, 0o755])),
)


def step(op: tuple):
    """One random change as a call of a run."""
    return lambda b: _apply(b, op)


def _apply(b: Bench, op: tuple) -> None:
    """One random change; one that cannot be made (a missing path, a folder in the way)
    changes nothing, as a failing tool call would."""
    import shutil
    kind, path, *rest = op
    real = b.real(path)
    try:
        if kind == "write":
            os.makedirs(os.path.dirname(real), exist_ok=True)
            data = rest[0] if isinstance(rest[0], bytes) else rest[0].encode()
            with open(real, "wb") as f:
                f.write(data)
        elif kind == "remove":
            os.unlink(real)
        elif kind == "rename":
            target = b.real(rest[0])
            if target == real or target.startswith(real + "/") or os.path.exists(target):
                return
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.rename(real, target)
        elif kind == "mkdir":
            os.makedirs(real, exist_ok=True)
        elif kind == "rmtree":
            shutil.rmtree(real)
        elif kind == "chmod" and os.path.isfile(real):
            os.chmod(real, rest[0])
    except OSError:
        pass


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(runs=st.lists(st.lists(_op, min_size=1, max_size=5), min_size=1, max_size=4),
       seed=st.lists(st.sampled_from(NAMES), max_size=3))
def test_random_runs_reverted_newest_first_restore_the_tree(tmp_path_factory, runs, seed):
    root = tmp_path_factory.mktemp("ws")
    for name in seed:
        os.makedirs(os.path.dirname(root / name), exist_ok=True)
        (root / name).write_text(f"seed {name}\n")
    b = Bench(str(root))
    states = [tree(b.root)]
    ids = []
    for ops in runs:
        ids.append(b.run(*map(step, ops)))
        states.append(tree(b.root))
    kept = set(b.cps.ids())
    for i in reversed(range(len(ids))):
        if ids[i] in kept:
            b.cps.revert(ids[i])
        else:  # the run changed nothing
            assert states[i + 1] == states[i]
        assert tree(b.root) == states[i]
    assert tree(b.root) == states[0]


@settings(max_examples=max(PROPERTY_EXAMPLES // 4, 25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(runs=st.lists(st.lists(_op, min_size=1, max_size=4), min_size=2, max_size=3),
       data=st.data())
def test_a_conflicting_revert_is_refused_with_nothing_changed(tmp_path_factory, runs, data):
    b = Bench(str(tmp_path_factory.mktemp("ws")))
    ids = [b.run(*map(step, ops)) for ops in runs]
    kept = [i for i in ids if i in set(b.cps.ids())]
    if not kept:
        return
    target = data.draw(st.sampled_from(kept))
    after = b.cps.get(target).after
    files = [p for p, s in after.items() if s.kind == "file"]
    absent = [p for p, s in after.items() if s.kind == "absent"]
    path = data.draw(st.sampled_from(files or absent or [None]))
    if path is None:
        return
    rel = path[len("/work/"):]
    # (it fails where a later run's folder is, or a file where a folder would go)
    with contextlib.suppress(OSError):
        b.page(write(rel, f"the page's own {data.draw(st.integers())}"))
    if b.cps._current(path).same(after[path]):
        return  # nothing the page could change there: no conflict to refuse
    before = tree(b.root)
    with pytest.raises(FsError) as refused:
        b.cps.revert(target)
    assert refused.value.code == "ECONFLICT"
    assert tree(b.root) == before


# -- through the session: the page's h.revert / h.diff requests ---------------------------


def _session(tmp_path, **options):
    import asyncio

    from harness.runtime.native import NativeRuntime
    from harness.session import Session
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("one\n")
    turns = [{"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
             {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "two\n"}}]},
             {"text": "done"}]
    runtime = NativeRuntime(str(tmp_path / "ws"))
    session = Session.from_options(json.dumps(
        {"model": {"api": "scripted", "turns": turns}, **options}), runtime)

    async def go():
        return await session.prompt("r1", "change a")
    asyncio.run(go())
    return session, runtime


def test_the_page_reverts_through_the_session_and_hears_the_changes(tmp_path):
    session, runtime = _session(tmp_path)
    diff = json.loads(session.checkpoint('{"op": "diff", "runId": "r1"}'))
    assert diff["ok"] and diff["value"][0]["path"] == "/work/a.txt"
    assert "+two" in diff["value"][0]["diff"]
    reply = json.loads(session.checkpoint('{"op": "revert", "runId": "r1"}'))
    assert reply["ok"] and reply["value"]["reverted"] == ["r1"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "one\n"
    [change] = [m for m in runtime.messages if m.get("type") == "file_change"
                and m.get("tool") == "revert"]
    assert change["path"] == "/work/a.txt" and change["callId"] == reply["value"]["revertId"]
    for bad, code in (('{"op": "revert"}', "EINVAL"), ('{"op": "x", "runId": "r1"}', "EINVAL"),
                      ("[1]", "EINVAL"), ('{"op": "revert", "runId": "nope"}', "ENOENT"),
                      ("not json", "EINVAL")):
        answer = json.loads(session.checkpoint(bad))
        assert not answer["ok"] and answer["code"] == code, (bad, answer)


def test_with_checkpoints_off_no_pre_image_is_taken(tmp_path):
    session, _ = _session(tmp_path, checkpoints=False)
    answer = json.loads(session.checkpoint('{"op": "list"}'))
    assert not answer["ok"] and "checkpoints are off" in answer["message"]
    assert session.journal.befores() == []
    assert (tmp_path / "ws" / "a.txt").read_text() == "two\n"


def test_rewind_reverts_the_later_runs_and_cuts_the_thread(tmp_path):
    import asyncio

    from harness.runtime.native import NativeRuntime
    from harness.session import Session
    (tmp_path / "ws").mkdir()
    def w(path, content):
        return {"toolCalls": [{"name": "write", "arguments": {"path": path, "content": content}}]}
    turns = [w("a.txt", "first\n"), {"text": "one"},
             {"toolCalls": [{"name": "read", "arguments": {"path": "a.txt"}}]},
             w("a.txt", "second\n"), w("b.txt", "b\n"), {"text": "two"},
             w("c.txt", "c\n"), {"text": "three"},
             {"text": "after the rewind"}]
    runtime = NativeRuntime(str(tmp_path / "ws"))
    session = Session.from_options(json.dumps({"model": {"api": "scripted", "turns": turns}}),
                                   runtime)

    async def go(run_id, text):
        return await session.prompt(run_id, text)
    for i, text in enumerate(["prompt one", "prompt two", "prompt three"], 1):
        asyncio.run(go(f"r{i}", text))
    reply = json.loads(session.threads('{"op": "rewind", "runId": "r2"}'))
    assert reply["ok"], reply
    assert reply["value"]["rewound"] == ["r2", "r3"]
    assert reply["value"]["reverted"] == ["r3", "r2"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "first\n"
    assert not (tmp_path / "ws" / "b.txt").exists() and not (tmp_path / "ws" / "c.txt").exists()
    history = session.conversations.store.current.history
    assert [m.text for m in history if type(m).__name__ == "UserMessage"] == ["prompt one"]
    transcript = session.conversations.store.current.transcript
    assert {e.get("runId") for e in transcript} == {"r1"}
    asyncio.run(go("r4", "prompt four"))
    last = session.agent.model.requests[-1]
    texts = [getattr(m, "text", "") for m in last.messages]
    assert "prompt one" in texts and "prompt four" in texts
    assert "prompt two" not in texts and "prompt three" not in texts
    again = json.loads(session.threads('{"op": "rewind", "runId": "r2"}'))
    assert not again["ok"] and again["code"] == "ENOENT"


def test_a_reopened_session_can_still_rewind_and_revert(tmp_path):
    """The thread's run marks and the checkpoints are kept with the storage: a new
    session over it (a reload) rewinds an earlier run."""
    import asyncio

    from harness.runtime.native import NativeRuntime
    from harness.session import Session
    (tmp_path / "ws").mkdir()
    state = tmp_path / "state" / "threads"
    state.mkdir(parents=True)
    turns = [{"toolCalls": [{"name": "write", "arguments": {"path": "n.txt", "content": "n\n"}}]},
             {"text": "done"}]

    def open_session(script):
        runtime = NativeRuntime(str(tmp_path / "ws"), threads=str(state))
        return Session.from_options(json.dumps({"model": {"api": "scripted", "turns": script}}),
                                    runtime)

    first = open_session(turns)

    async def go():
        return await first.prompt("r1", "make n")
    asyncio.run(go())
    assert (tmp_path / "ws" / "n.txt").exists()
    again = open_session([])
    reply = json.loads(again.threads('{"op": "rewind", "runId": "r1"}'))
    assert reply["ok"], reply
    assert not (tmp_path / "ws" / "n.txt").exists()
    assert len(again.conversations.store.current.history) == 0


# -- the property: interleavings of runs, the page, reverts, reopens and rewinds ----------

_STEP = st.one_of(
    st.tuples(st.just("run"), st.lists(st.tuples(st.booleans(), _op), min_size=1, max_size=4)),
    st.tuples(st.just("page"), _op),
    st.tuples(st.just("revert"), st.integers(0, 7), st.booleans(), st.booleans()),
    st.tuples(st.just("rewind"), st.integers(0, 7)),
    st.tuples(st.just("reopen"),),
)


def _expected(start: dict[str, tuple], chain: list) -> dict[str, tuple]:
    """``start`` with the pre-images of ``chain`` (newest first) put back, and nothing
    else: what a revert must leave."""
    out = dict(start)

    def drop_below(rel: str, keep: set[str] | None = None) -> None:
        for p in [p for p in out if p.startswith(f"{rel}/") and p not in (keep or ())]:
            del out[p]

    for c in chain:
        rels = {p[len("/work/"):] for p in c.before}
        for path in sorted(c.before, key=lambda p: p.count("/")):
            was, rel = c.before[path], path[len("/work/"):]
            if was.kind == "absent":
                out.pop(rel, None)
                drop_below(rel)
            elif was.kind == "dir":
                if was.complete:
                    drop_below(rel, rels)
                out[rel] = ("dir", was.mode)
            else:
                drop_below(rel)
                out[rel] = ("file", was.mode, was.digest)
    return out


def _changed(a: dict[str, tuple], b: dict[str, tuple]) -> set[str]:
    return {p for p in set(a) | set(b) if a.get(p) != b.get(p)}


class Story:
    """A workspace lived through by runs, the page and the undo; after every step the
    page's edits that are still the last word on their path are checked kept."""

    def __init__(self, root: str, store: str | None) -> None:
        self.root, self.store = root, store
        self.b = Bench(root, store)
        self.ids: list[str] = []  # runs and reverts, oldest first
        self.page_last: dict[str, tuple | None] = {}  # path → what the page left there

    def did(self, before: dict[str, tuple], by_page: bool) -> None:
        after = tree(self.root)
        for p in _changed(before, after):
            if by_page:
                self.page_last[p] = after.get(p)
            else:
                self.page_last.pop(p, None)

    def op(self, step: tuple, by_page: bool):
        def go(b: Bench) -> None:
            before = tree(self.root)
            _apply(b, step)
            self.did(before, by_page)
        return go

    def run(self, calls: list[tuple[bool, tuple]]) -> None:
        ops = [Page(self.op(s, True)) if page else self.op(s, False) for page, s in calls]
        run_id = self.b.run(*ops)
        if run_id in self.b.cps.ids():
            self.ids.append(run_id)

    def page(self, step: tuple) -> None:
        self.b.page(self.op(step, True))

    def undo(self, target: str, cascade: bool = False, force: bool = False,
             runs: list[str] | None = None) -> None:
        start = tree(self.root)
        try:
            result = self.b.cps.revert(target, cascade=cascade, force=force, runs=runs)
        except FsError as exc:
            assert exc.code in ("ECONFLICT", "EINVAL", "ENOENT"), exc
            assert tree(self.root) == start  # refused: nothing changed
            return
        chain = [self.b.cps.get(r) for r in result["reverted"]]
        now = tree(self.root)
        assert now == _expected(start, chain)  # exactly the pre-images, nothing else
        if not force:  # the page's last word on a path is never taken back
            assert not _changed(start, now) & set(self.page_last)
        if result["revertId"] is not None:
            self.ids.append(result["revertId"])
        if force and result["revertId"] is not None:
            self.b.cps.revert(result["revertId"])  # a forced revert is undone exactly
            assert tree(self.root) == start
            return
        self.did(start, False)

    def reopen(self) -> None:
        """A reload: the tree written out and read back (modes kept, new inodes and
        times, as the stored workspace's restore makes it), a new journal and
        checkpoints over the same store (a memory store keeps none)."""
        kept = tree(self.root)
        files = {}
        for rel, entry in kept.items():
            if entry[0] == "file":
                files[rel] = Path(self.root, rel).read_bytes()
        import shutil
        shutil.rmtree(self.root)
        os.mkdir(self.root)
        for rel in sorted(kept, key=lambda p: p.count("/")):
            real = os.path.join(self.root, rel)
            if kept[rel][0] == "dir":
                os.mkdir(real)
            else:
                Path(real).write_bytes(files[rel])
        for rel in sorted(kept, key=lambda p: -p.count("/")):
            os.chmod(os.path.join(self.root, rel), kept[rel][1])
        assert tree(self.root) == kept
        runs, pages = self.b.runs, self.b.pages
        self.b = Bench(self.root, self.store)
        self.b.runs, self.b.pages = runs, pages
        if self.store is None:
            self.ids = []


@settings(max_examples=max(PROPERTY_EXAMPLES // 8, 20), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(_STEP, min_size=1, max_size=10),
       seed=st.lists(st.sampled_from(NAMES), max_size=3), stored=st.booleans())
def test_random_interleavings_never_revert_what_the_run_did_not_do(tmp_path_factory, steps,
                                                                   seed, stored):
    """Runs (with page edits in the middle of them), page edits, reverts (cascaded,
    forced), rewinds and reopens in any order: every revert restores exactly the
    pre-images of what it takes back and touches nothing else, or is refused and
    changes nothing; a page edit is never taken back (but by a forced revert, which
    its own revert undoes exactly)."""
    base = tmp_path_factory.mktemp("story")
    root = base / "ws"
    root.mkdir()
    for name in seed:
        os.makedirs(os.path.dirname(root / name), exist_ok=True)
        (root / name).write_text(f"seed {name}\n")
    story = Story(str(root), str(base / "state") if stored else None)
    for step in steps:
        kind = step[0]
        if kind == "run":
            story.run(step[1])
        elif kind == "page":
            story.page(step[1])
        elif kind == "revert" and story.ids:
            _, at, cascade, force = step
            story.undo(story.ids[at % len(story.ids)], cascade=cascade, force=force and at > 5)
        elif kind == "rewind" and story.ids:
            later = [r for r in story.ids[step[1] % len(story.ids):] if r.startswith("run-")]
            kept = [r for r in reversed(later) if story.b.cps.revertable(r)]
            if kept:
                story.undo(kept[-1], runs=kept)
        elif kind == "reopen":
            story.reopen()
