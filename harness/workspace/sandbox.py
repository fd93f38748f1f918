"""The workspace's side of the sandbox: what to send before a shell command, and how
the sandbox's changes come back.

The shell (just-bash and ``python3``) runs in a sandbox worker with its own Pyodide and
its own copy of ``/work`` (shell/sandbox.mjs). Before each command the harness sends
what changed since the sandbox last saw the workspace, as the change journal
(:mod:`harness.workspace.journal`) tells it: no tree scan, but for the first, full copy. After
it, the sandbox sends what the command changed. Those changes are **hostile input**:
every path goes through :meth:`Workspace.resolve`, only plain files and directories are
taken (a symlink made in the sandbox is reported and dropped), and sizes and counts are
bounded. Nothing here knows about workers or messages; :mod:`harness.runtime.sandbox_shell`
does the transport.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..errors import FsError
from ..limits import MAX_WORKSPACE_BYTES, MAX_WORKSPACE_ENTRIES
from .jail import Workspace
from .journal import Change, Journal
from .paths import MOUNT, ancestors, remove, rmtree

DIR, FILE = -1, -2  # in what the sandbox holds: a folder; from _kind: a regular file
MAX_CHANGES = 100_000  # entries one command may bring back
MAX_BYTES = 512 * 1024 * 1024  # bytes one command may bring back, whatever the budget


@dataclass
class Outgoing:
    """The workspace as the sandbox must see it before a command."""

    full: bool  # the sandbox must drop its /work and take exactly this
    dirs: list[str]  # every directory below /work, parents first
    files: list[tuple[str, bytes]]  # new or changed files
    removed: list[str]  # files and directories that are gone


@dataclass
class Changes:
    """What a command did to the sandbox's /work (as the sandbox says)."""

    dirs: list[str] = field(default_factory=list)
    files: list[tuple[str, bytes]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # symlinks and other special files


class SandboxView:
    """What the sandbox's copy of the workspace holds, as far as the harness knows, kept
    in step by the change journal: before a command it sends what the journal says
    changed since the last send, and never scans the tree but for a full copy.

    ``None`` means unknown (never synced, the sandbox was restarted, a command's changes
    were refused, or the journal could not say): the next :meth:`outgoing` is then a
    full copy, the one walk of the tree.
    """

    def __init__(self, workspace: Workspace, journal: Journal) -> None:
        self.workspace = workspace
        self.journal = journal
        # The sandbox's /work: each file's size, or DIR for a folder.
        self._known: dict[str, int] | None = None
        self._bytes = 0
        self._read = journal.reader()  # the journal position the sandbox's copy matches
        self._own: list[tuple[int, int]] = []  # positions of our own applies since
        self._resend: set[str] = set()  # paths the sandbox has that the workspace refused
        self.conflicts: list[str] = []  # the paths kept by the last apply (for the page)
        self.full_syncs = 0  # tree walks (for the tests: only a full copy walks the tree)
        # The /work paths the read rule denies: never sent, never changed by a command.
        self.hidden: Callable[[str], bool] | None = None

    def invalidate(self) -> None:
        self._known = None

    def outgoing(self) -> Outgoing:
        """What the sandbox lacks (from the journal); from then on the view assumes the
        sandbox has it."""
        changes = None if self._known is None else self.journal.since(self._read.position)
        position = self.journal.position
        if changes is None:
            return self._full(position)
        assert self._known is not None
        touched = self._touched(changes) | self._resend
        self._resend = set()
        self._own = []
        self._read.position = position
        dirs: list[str] = []
        files: list[tuple[str, bytes]] = []
        removed: list[str] = []
        done: set[str] = set()  # sent whole with a folder above
        for path in sorted(touched, key=lambda p: (p.count("/"), p)):
            if path in done:
                continue
            real = self._real_or_none(path)
            kind = None if self._hides(path) else _kind(real)
            if kind is None:
                if path in self._known:
                    removed.append(path)
                    self._forget(path)
                continue
            if kind == DIR:
                if self._known.get(path) != DIR:
                    if path in self._known:  # a file there before: it goes first
                        removed.append(path)
                    self._forget(path)
                    dirs.append(path)
                    self._known[path] = DIR
                # What is below a folder that came whole (a rename, a move in) is not in
                # the journal one by one: send it all.
                assert real is not None
                for sub, sub_real, is_dir in _walk(real, path, self.hidden):
                    done.add(sub)
                    if is_dir:
                        if self._known.get(sub) != DIR:
                            dirs.append(sub)
                            self._known[sub] = DIR
                    else:
                        self._send(sub, sub_real, files)
                continue
            assert real is not None
            if self._known.get(path) == DIR:  # a folder there before: it goes first
                removed.append(path)
                self._forget(path)
            self._send(path, real, files)
        dirs.sort(key=lambda p: (p.count("/"), p))
        return Outgoing(False, dirs, files, removed)

    def _full(self, position: int) -> Outgoing:
        self.full_syncs += 1
        self._known = {}
        self._bytes = 0
        self._own = []
        self._resend = set()
        self._read.position = position
        dirs: list[str] = []
        files: list[tuple[str, bytes]] = []
        for path, real, is_dir in _walk(self.workspace.root, MOUNT, self.hidden):
            if is_dir:
                dirs.append(path)
                self._known[path] = DIR
            else:
                self._send(path, real, files)
        dirs.sort(key=lambda p: (p.count("/"), p))
        return Outgoing(True, dirs, files, [])

    def _send(self, path: str, real: str, files: list[tuple[str, bytes]]) -> None:
        assert self._known is not None
        try:
            with open(real, "rb") as f:
                data = f.read()
        except OSError:  # gone meanwhile: it is in the journal, the next send removes it
            return
        files.append((path, data))
        self._bytes += len(data) - max(self._known.get(path, 0), 0)
        self._known[path] = len(data)

    def _hides(self, path: str) -> bool:
        return self.hidden is not None and self.hidden(path)

    def reached(self, changes: Changes) -> list[str]:
        """Every /work path the changes would touch: each changed path, and everything
        in the workspace below a folder they remove or replace by a file (a rename
        reports only the folder that went)."""
        paths = [*changes.dirs, *changes.removed, *(p for p, _ in changes.files)]
        for path in [*changes.removed, *(p for p, _ in changes.files)]:
            paths += self._below(path)
        return paths

    def _below(self, path: str) -> list[str]:
        """What the workspace holds below ``path`` (nothing unless it is a folder)."""
        real = self._real_or_none(path)
        if real is None or _kind(real) != DIR:
            return []
        return [sub for sub, _, _ in _walk(real, path)]

    def hidden_refusal(self, changes: Changes) -> str | None:
        """Why the changes are refused when they reach a path the read rule denies (the
        path itself, or below a folder they remove or replace), naming only the path
        the command changed: never the denied one, nor whether it exists."""
        hidden = self.hidden
        if hidden is None:
            return None
        replaced = [*changes.removed, *(p for p, _ in changes.files)]
        for path in [*changes.dirs, *replaced]:
            if hidden(path) or (path in replaced and any(map(hidden, self._below(path)))):
                return (f"EACCES: {path} is, or holds, a path the page's permission rules "
                        "deny reading, which the shell may not change; none of the "
                        "command's changes to /work were kept")
        return None

    def _forget(self, path: str) -> None:
        """Drop ``path`` and everything below it from what the sandbox holds."""
        assert self._known is not None
        size = self._known.pop(path, None)
        if size is not None and size != DIR:
            self._bytes -= size
        if size == DIR or size is None:
            for sub in [k for k in self._known if k.startswith(path + "/")]:
                sub_size = self._known.pop(sub)
                if sub_size != DIR:
                    self._bytes -= sub_size

    def _touched(self, changes: list[Change]) -> set[str]:
        """The paths the journal's changes touched, less our own applies'."""
        touched: set[str] = set()
        for change in changes:
            if any(a <= change.seq < b for a, b in self._own):
                continue
            touched.add(change.path)
            if change.source is not None:
                touched.add(change.source)
        return touched

    def apply(self, changes: Changes, budget: int) -> list[str]:
        """Take a command's changes into the workspace. Returns notes for the model
        (what was refused). ``budget``: bytes the command may add to the workspace."""
        self.conflicts = []
        refusal = self._check(changes, budget)
        if refusal is not None:
            self.invalidate()  # the sandbox holds changes the workspace refused
            return [refusal]
        notes = [f"{p}: not copied back (symlinks and special files are not supported)"
                 for p in changes.skipped]
        here = self.journal.since(self._read.position)
        if here is None:  # too much changed here meanwhile to tell what: keep it all
            self.invalidate()
            return ["the workspace changed too much while the command ran to tell its "
                    "changes apart; none of the command's changes to /work were kept"]
        kept = self._conflicts(changes, self._touched(here))
        if kept:
            self.conflicts = sorted(kept)
            notes += [f"{p}: kept the workspace's version, which changed (a page or tool write) "
                      "while the command ran; the command's change to it was not applied"
                      for p in self.conflicts]
            changes = _without(changes, kept)
        start = self.journal.position
        known = self._known  # what the sandbox holds, kept in step when it is known
        for path in sorted(changes.removed, key=lambda p: -p.count("/")):
            notes += self._attempt(path, _remove_if_there)
            if known is not None:
                self._forget(path)
        for path in sorted(changes.dirs, key=lambda p: p.count("/")):
            notes += self._attempt(path, _make_dir)
            if known is not None:
                self._forget(path)
                known[path] = DIR
        for path, data in changes.files:
            notes += self._attempt(path, functools.partial(_write, data=data))
            if known is not None:
                self._bytes += len(data) - max(known.get(path, 0), 0)
                known[path] = len(data)
        self._own.append((start, self.journal.position))
        return notes

    def _conflicts(self, changes: Changes, here: set[str]) -> set[str]:
        """The paths of ``changes`` that changed in the workspace since they were sent:
        the path itself, something below it, or a folder above it."""
        if not here:
            return set()
        above = {p for path in here for p in ancestors(path)}  # folders with a change below
        kept = set()
        for path in [*changes.removed, *changes.dirs, *(p for p, _ in changes.files)]:
            if path in here or path in above or any(a in here for a in ancestors(path)):
                if path in changes.removed and _kind(self._real_or_none(path)) is None:
                    continue  # removed on both sides: the same outcome
                kept.add(path)
        return kept

    # -- helpers ---------------------------------------------------------------

    def _check(self, changes: Changes, budget: int) -> str | None:
        # First: nothing about a path the shell was never shown may be told (its size
        # through the budget, its content through a diff).
        refusal = self.hidden_refusal(changes)
        if refusal is not None:
            return refusal
        count = len(changes.dirs) + len(changes.files) + len(changes.removed)
        if count > MAX_CHANGES:
            return (f"the command changed {count} files and directories, more than "
                    f"{MAX_CHANGES}; none of its changes to /work were kept")
        total = sum(len(data) for _, data in changes.files)
        grown = sum(max(0, len(data) - _size(self._real_or_none(path)))
                    for path, data in changes.files)
        if total > MAX_BYTES or grown > budget:
            return (f"ENOSPC: the command wrote {grown} bytes to /work, more than the "
                    f"shell's maxOutputBytes ({budget}); none of its changes to /work were "
                    "kept")
        if self._known is not None:
            entries, size = len(self._known), self._bytes
            made = [*changes.dirs, *(f for f, _ in changes.files)]
            entries += sum(p not in self._known for p in made)
            entries -= sum(p in self._known for p in changes.removed)
            if entries > MAX_WORKSPACE_ENTRIES or size + grown > MAX_WORKSPACE_BYTES:
                return (f"ENOSPC: /work would hold {entries:,} files and directories and "
                        f"{size + grown:,} bytes; the workspace's limit is "
                        f"{MAX_WORKSPACE_ENTRIES:,} and {MAX_WORKSPACE_BYTES:,} bytes; none of "
                        "the command's changes to /work were kept")
        for path in [*changes.dirs, *changes.removed, *(p for p, _ in changes.files)]:
            try:
                resolved = self.workspace.resolve(path)
            except FsError as exc:
                return f"{path}: {exc}; none of the command's changes to /work were kept"
            if resolved.is_root:
                return "the command replaced /work itself; none of its changes were kept"
        return None

    def _real(self, path: str) -> str:
        return self.workspace.resolve(path).real

    def _real_or_none(self, path: str) -> str | None:
        try:
            return self._real(path)
        except FsError:
            return None

    def _attempt(self, path: str, action: Callable[[str], None]) -> list[str]:
        try:
            action(self._real(path))
        except (FsError, OSError) as exc:
            self._resend.add(path)  # the sandbox has it, the workspace not: send again
            return [f"{path}: not copied back ({exc})"]
        return []


def _without(changes: Changes, kept: set[str]) -> Changes:
    """``changes`` less every change at or below a kept path."""
    def free(path: str) -> bool:
        return not any(path == k or path.startswith(k + "/") for k in kept)
    return Changes(dirs=[d for d in changes.dirs if free(d)],
                   files=[(p, b) for p, b in changes.files if free(p)],
                   removed=[r for r in changes.removed if free(r)], skipped=changes.skipped)


def _kind(real: str | None) -> int | None:
    """DIR for a folder, FILE for a regular file, None for anything else or nothing."""
    if real is None:
        return None
    try:
        mode = os.stat(real, follow_symlinks=False).st_mode
    except OSError:
        return None
    return DIR if stat.S_ISDIR(mode) else FILE if stat.S_ISREG(mode) else None


def _walk(real: str, shown: str,
          hidden: Callable[[str], bool] | None = None) -> Iterator[tuple[str, str, bool]]:
    """Every folder and regular file below ``real``: (workspace path, real path, is_dir);
    what ``hidden`` says of a workspace path is left out, a folder with all below it."""
    todo = [(real, shown)]
    while todo:
        here, path = todo.pop()
        try:
            entries = sorted(os.scandir(here), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            sub = f"{path}/{entry.name}"
            if hidden is not None and hidden(sub):
                continue
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                yield sub, entry.path, True
                todo.append((entry.path, sub))
            elif stat.S_ISREG(mode):
                yield sub, entry.path, False


def _size(real: str | None) -> int:
    try:
        return os.stat(real, follow_symlinks=False).st_size if real else 0
    except OSError:
        return 0


def _remove_if_there(real: str) -> None:
    if os.path.lexists(real):
        remove(real)


def _make_dir(real: str) -> None:
    if os.path.lexists(real) and not os.path.isdir(real):
        os.unlink(real)
    os.makedirs(real, exist_ok=True)


def _write(real: str, *, data: bytes) -> None:
    if os.path.isdir(real) and not os.path.islink(real):
        rmtree(real)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, "wb") as f:
        f.write(data)
