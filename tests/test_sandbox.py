"""What crosses between the workspace and the sandbox's copy of it (harness/workspace/sandbox.py).

The sandbox's own side is JavaScript (shell/sandbox.mjs, proven in e2e/); here a small
stand-in keeps a copy in another directory, so that the sync rules and, above all, the
checks on what comes back can be tested on CPython."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.policy.permissions import Rules
from harness.runtime.scan_feed import ScanFeed
from harness.workspace.jail import Workspace
from harness.workspace.journal import Journal
from harness.workspace.sandbox import MAX_CHANGES, Changes, Outgoing, SandboxView


def view_of(ws: Workspace, **feed: object) -> SandboxView:
    """The view over the CPython journal (harness/runtime/scan_feed.py's ScanFeed: it compares the
    tree at each look; the worker's journal is told by the filesystem's hooks, and the
    in-Pyodide tier runs these tests over it too: tests/test_journal_worker.py)."""
    return SandboxView(ws, Journal(ScanFeed(ws.root, **feed)))  # type: ignore[arg-type]


class Copy:
    """The sandbox's /work: takes an Outgoing, reports Changes like the sandbox does."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir()
        self.snapshot: dict[str, bytes | None] = {}

    def load(self, out: Outgoing) -> None:
        if out.full:
            for path in sorted(self.root.rglob("*"), reverse=True):
                path.unlink() if path.is_file() else path.rmdir()
        for path in out.removed:
            real = self.real(path)
            if real.is_dir():
                for p in sorted(real.rglob("*"), reverse=True):
                    p.unlink() if p.is_file() else p.rmdir()
                real.rmdir()
            elif real.exists():
                real.unlink()
        for path in out.dirs:
            self.real(path).mkdir(exist_ok=True)
        for path, data in out.files:
            self.real(path).write_bytes(data)
        self.snapshot = self.scan()

    def collect(self) -> Changes:
        now = self.scan()
        changes = Changes()
        for path, data in now.items():
            if data is None and self.snapshot.get(path, b"") is not None:
                changes.dirs.append(path)
            elif data is not None and self.snapshot.get(path) != data:
                changes.files.append((path, data))
        changes.removed = [p for p in self.snapshot if p not in now]
        return changes

    def scan(self) -> dict[str, bytes | None]:
        return {"/work/" + str(p.relative_to(self.root)):
                (None if p.is_dir() else p.read_bytes()) for p in self.root.rglob("*")}

    def real(self, path: str) -> Path:
        return self.root / path.removeprefix("/work/")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "work")


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    return Copy(tmp_path / "sandbox")


def files_of(root: str | Path) -> dict[str, bytes | None]:
    root = Path(root)
    return {str(p.relative_to(root)): (None if p.is_dir() else p.read_bytes())
            for p in sorted(root.rglob("*"))}


def test_first_sync_is_full_then_only_what_changed(ws: Workspace, copy: Copy) -> None:
    Path(ws.root, "src").mkdir()
    Path(ws.root, "src", "a.py").write_text("a")
    Path(ws.root, "b.txt").write_text("b")
    view = view_of(ws)
    first = view.outgoing()
    assert first.full and first.dirs == ["/work/src"]
    assert sorted(p for p, _ in first.files) == ["/work/b.txt", "/work/src/a.py"]
    copy.load(first)
    assert files_of(copy.root) == files_of(ws.root)

    Path(ws.root, "b.txt").write_text("bb")
    Path(ws.root, "src", "a.py").unlink()
    second = view.outgoing()
    assert not second.full and [p for p, _ in second.files] == ["/work/b.txt"]
    assert second.removed == ["/work/src/a.py"]
    copy.load(second)
    assert files_of(copy.root) == files_of(ws.root)
    assert view.outgoing().files == []


def test_only_a_full_copy_walks_the_tree(ws: Workspace, copy: Copy) -> None:
    Path(ws.root, "a.txt").write_text("1")
    view = view_of(ws)
    copy.load(view.outgoing())
    for _ in range(3):
        assert view.outgoing().files == []
    Path(ws.root, "a.txt").write_text("2")
    assert [p for p, _ in view.outgoing().files] == ["/work/a.txt"]
    assert view.full_syncs == 1
    view.invalidate()  # a sandbox restarted: one full copy again
    assert view.outgoing().full and view.full_syncs == 2


def test_a_folder_renamed_here_is_sent_whole(ws: Workspace, copy: Copy) -> None:
    Path(ws.root, "d", "e").mkdir(parents=True)
    Path(ws.root, "d", "e", "f.txt").write_text("f")
    view = view_of(ws)
    copy.load(view.outgoing())
    os.rename(Path(ws.root, "d"), Path(ws.root, "moved"))
    out = view.outgoing()
    assert "/work/d" in out.removed and out.dirs == ["/work/moved", "/work/moved/e"]
    assert out.files == [("/work/moved/e/f.txt", b"f")]
    copy.load(out)
    assert files_of(copy.root) == files_of(ws.root)


def test_changes_come_back_through_the_jail(ws: Workspace, copy: Copy) -> None:
    Path(ws.root, "old.txt").write_text("old")
    view = view_of(ws)
    copy.load(view.outgoing())
    (copy.root / "new").mkdir()
    (copy.root / "new" / "f.txt").write_text("made in the sandbox")
    (copy.root / "old.txt").unlink()
    notes = view.apply(copy.collect(), budget=1024)
    assert notes == []
    assert files_of(ws.root) == {"new": None, "new/f.txt": b"made in the sandbox"}


@pytest.mark.parametrize("path", ["/work/../escape.txt", "/etc/passwd", "/tmp/x", "../x",
                                  "/work/a\x00b", "/workx/y"])
def test_a_path_outside_the_workspace_refuses_every_change(ws: Workspace, path: str) -> None:
    view = view_of(ws)
    view.outgoing()
    changes = Changes(files=[("/work/fine.txt", b"ok"), (path, b"evil")])
    notes = view.apply(changes, budget=1024)
    assert len(notes) == 1 and "none of the command's changes" in notes[0]
    assert files_of(ws.root) == {}
    assert not os.path.exists(Path(ws.root).parent / "escape.txt")
    assert view.outgoing().full  # the sandbox diverged: it is reset from the workspace


def test_a_symlink_planted_in_the_workspace_does_not_lead_out(ws: Workspace,
                                                               tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, Path(ws.root, "link"))
    view = view_of(ws)
    view.outgoing()
    notes = view.apply(Changes(files=[("/work/link/pwned.txt", b"x")]), budget=1024)
    assert notes and "EACCES" in notes[0]
    assert list(outside.iterdir()) == []


def test_symlinks_made_in_the_sandbox_are_reported_not_copied(ws: Workspace) -> None:
    view = view_of(ws)
    view.outgoing()
    notes = view.apply(Changes(skipped=["/work/link"]), budget=1024)
    assert notes == ["/work/link: not copied back (symlinks and special files are not "
                     "supported)"]
    assert not os.path.lexists(Path(ws.root, "link"))


def test_the_byte_budget_counts_what_a_command_adds(ws: Workspace) -> None:
    Path(ws.root, "big.log").write_bytes(b"x" * 5000)
    view = view_of(ws)
    view.outgoing()
    # Appending 100 bytes to a 5,000-byte file costs 100 bytes, not 5,100.
    assert view.apply(Changes(files=[("/work/big.log", b"x" * 5100)]), budget=1000) == []
    notes = view.apply(Changes(files=[("/work/huge.bin", b"y" * 2000)]), budget=1000)
    assert len(notes) == 1 and notes[0].startswith("ENOSPC") and "maxOutputBytes" in notes[0]
    assert not Path(ws.root, "huge.bin").exists()


def test_too_many_changes_are_refused(ws: Workspace) -> None:
    view = view_of(ws)
    view.outgoing()
    notes = view.apply(Changes(dirs=[f"/work/d{i}" for i in range(MAX_CHANGES + 1)]), 1024)
    assert len(notes) == 1 and str(MAX_CHANGES) in notes[0]
    assert files_of(ws.root) == {}


def test_replacing_the_workspace_itself_is_refused(ws: Workspace) -> None:
    view = view_of(ws)
    view.outgoing()
    assert "replaced /work" in view.apply(Changes(removed=["/work"]), 1024)[0]
    assert os.path.isdir(ws.root)


def test_a_file_and_a_directory_may_trade_places(ws: Workspace, copy: Copy) -> None:
    Path(ws.root, "x").write_text("file")
    Path(ws.root, "y").mkdir()
    view = view_of(ws)
    copy.load(view.outgoing())
    (copy.root / "x").unlink()
    (copy.root / "x").mkdir()
    (copy.root / "y").rmdir()
    (copy.root / "y").write_text("now a file")
    assert view.apply(copy.collect(), budget=1024) == []
    assert files_of(ws.root) == {"x": None, "y": b"now a file"}


# -- no silent lost update: a write made here while a command ran wins ------------------


def test_a_page_write_during_a_command_is_kept(ws: Workspace, copy: Copy) -> None:
    view = view_of(ws)
    Path(ws.root, "a.txt").write_bytes(b"original\n")
    Path(ws.root, "b.txt").write_bytes(b"b\n")
    copy.load(view.outgoing())
    # The command rewrites a.txt with the same bytes (sed -i matching nothing) and b.txt;
    # meanwhile the page writes a.txt.
    copy.real("/work/a.txt").write_bytes(b"original\n")
    copy.snapshot["/work/a.txt"] = b"stale"  # the sandbox saw its write
    copy.real("/work/b.txt").write_bytes(b"b from the command\n")
    Path(ws.root, "a.txt").write_bytes(b"the page's newer text\n")
    notes = view.apply(copy.collect(), budget=10**6)
    assert Path(ws.root, "a.txt").read_bytes() == b"the page's newer text\n"
    assert Path(ws.root, "b.txt").read_bytes() == b"b from the command\n"
    assert view.conflicts == ["/work/a.txt"]
    assert any("a.txt: kept the workspace's version" in n for n in notes)
    # The sandbox's copy is stale: the next command gets the page's version.
    out = view.outgoing()
    assert ("/work/a.txt", b"the page's newer text\n") in out.files


def test_a_write_within_the_clock_resolution_is_still_seen(ws: Workspace, copy: Copy) -> None:
    clock = [10**18]
    view = view_of(ws, now=lambda: clock[0])
    real = Path(ws.root, "a.txt")
    real.write_bytes(b"one")
    os.utime(real, ns=(clock[0], clock[0]))  # written in the very moment it is sent
    copy.load(view.outgoing())
    copy.real("/work/a.txt").write_bytes(b"sandbox")
    real.write_bytes(b"two")  # the same size, the same inode, the same mtime
    os.utime(real, ns=(clock[0], clock[0]))
    view.apply(copy.collect(), budget=10**6)
    assert real.read_bytes() == b"two" and view.conflicts == ["/work/a.txt"]


def test_files_made_or_removed_here_during_a_command_win(ws: Workspace, copy: Copy) -> None:
    view = view_of(ws)
    Path(ws.root, "d").mkdir()
    Path(ws.root, "d", "old.txt").write_bytes(b"old")
    Path(ws.root, "gone.txt").write_bytes(b"x")
    copy.load(view.outgoing())
    # The command removes d/ and writes gone.txt and new.txt; the page meanwhile adds
    # d/new.txt, removes gone.txt and makes new.txt.
    for p in sorted(copy.real("/work/d").rglob("*"), reverse=True):
        p.unlink()
    copy.real("/work/d").rmdir()
    copy.real("/work/gone.txt").write_bytes(b"sandbox")
    copy.real("/work/new.txt").write_bytes(b"sandbox")
    Path(ws.root, "d", "new.txt").write_bytes(b"page")
    Path(ws.root, "gone.txt").unlink()
    Path(ws.root, "new.txt").write_bytes(b"page")
    view.apply(copy.collect(), budget=10**6)
    assert files_of(ws.root) == {"d": None, "d/new.txt": b"page", "d/old.txt": b"old",
                                 "new.txt": b"page"}
    assert view.conflicts == ["/work/d", "/work/gone.txt", "/work/new.txt"]


def test_no_conflict_when_nothing_changed_here(ws: Workspace, copy: Copy) -> None:
    view = view_of(ws)
    Path(ws.root, "a.txt").write_bytes(b"a")
    Path(ws.root, "both-removed.txt").write_bytes(b"x")
    copy.load(view.outgoing())
    copy.real("/work/a.txt").write_bytes(b"from the command")
    copy.real("/work/both-removed.txt").unlink()
    Path(ws.root, "both-removed.txt").unlink()
    notes = view.apply(copy.collect(), budget=10**6)
    assert view.conflicts == [] and notes == []
    assert Path(ws.root, "a.txt").read_bytes() == b"from the command"


def test_a_command_that_would_overfill_the_workspace_keeps_nothing(
        ws: Workspace, copy: Copy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.workspace.sandbox.MAX_WORKSPACE_ENTRIES", 10)
    view = view_of(ws)
    for i in range(5):
        Path(ws.root, f"f{i}").write_bytes(b"x")
    copy.load(view.outgoing())
    for i in range(6):  # 5 + 6 > 10
        copy.real(f"/work/new{i}").write_bytes(b"")
    notes = view.apply(copy.collect(), budget=10**6)
    assert len(notes) == 1 and notes[0].startswith("ENOSPC: /work would hold 11 files")
    assert sorted(os.listdir(ws.root)) == [f"f{i}" for i in range(5)]
    # Removing as many as it adds stays within the limit.
    copy.load(view.outgoing())
    for i in range(5):
        copy.real(f"/work/f{i}").unlink()
    for i in range(6):
        copy.real(f"/work/new{i}").write_bytes(b"")
    assert view.apply(copy.collect(), budget=10**6) == []
    assert len(os.listdir(ws.root)) == 6


def test_a_read_deny_is_never_sent_to_the_sandbox_nor_changed_by_it(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "work")
    for rel, text in {"secret/key.txt": "S", "secret/sub/k2": "S2", "free/a.txt": "a"}.items():
        Path(ws.root, rel).parent.mkdir(parents=True, exist_ok=True)
        Path(ws.root, rel).write_text(text)
    view = view_of(ws)
    rules = Rules.parse({"read": {"*": "allow", "secret/**": "deny"}}, {"read": "path"})
    view.hidden = lambda path: rules.denies("read", path.removeprefix("/work/"))
    copy = Copy(tmp_path / "sandbox")
    copy.load(view.outgoing())
    assert files_of(copy.root) == {"free": None, "free/a.txt": b"a", "secret": None}
    before = files_of(ws.root)
    for changes in [Changes(removed=["/work/secret"]),
                    Changes(files=[("/work/secret/key.txt", b"overwritten")]),
                    Changes(files=[("/work/secret/new", b"n")]),
                    Changes(files=[("/work/secret", b"a file now")], removed=[]),
                    Changes(dirs=["/work/secret/sub"])]:
        notes = view.apply(changes, budget=1 << 20)
        assert len(notes) == 1 and "deny reading" in notes[0], (changes, notes)
        assert files_of(ws.root) == before
    # a change elsewhere is taken as before
    assert view.apply(Changes(files=[("/work/free/b.txt", b"b")]), budget=1 << 20) == []
    # a refused command reset the sandbox's copy: the full copy leaves them out too
    full = view.outgoing()
    assert full.full and not [p for p, _ in full.files if "secret" in p]
    # what changes here later under the denied path is not sent either
    Path(ws.root, "secret", "later.txt").write_text("L")
    Path(ws.root, "free", "c.txt").write_text("c")
    out = view.outgoing()
    assert [p for p, _ in out.files] == ["/work/free/c.txt"]
