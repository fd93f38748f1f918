"""The workspace's side of the sandbox: what to send before a shell command, and how
the sandbox's changes come back.

The shell (just-bash and ``python3``) runs in a sandbox worker with its own Pyodide and
its own copy of ``/work`` (shell/sandbox.mjs). Before each command the harness sends
what changed since the sandbox last saw the workspace; after it, the sandbox sends what
the command changed. Those changes are **hostile input**: every path goes through
:meth:`Workspace.resolve`, only plain files and directories are taken (a symlink made in
the sandbox is reported and dropped), and sizes and counts are bounded. Nothing here
knows about workers or messages; :mod:`harness.runtime.pyodide` does the transport.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import FsError
from .jail import MOUNT, Workspace
from .limits import MAX_WORKSPACE_BYTES, MAX_WORKSPACE_ENTRIES

# A file's signature: it is resent when this differs from what the sandbox last got.
Signature = tuple[int, int, int]
# Files whose mtime is this close to the moment they were sent may still change within
# the clock's resolution (Pyodide's is a millisecond) without their signature changing:
# they are sent again next time, as git treats "racily clean" index entries.
RACY_NS = 5_000_000
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
    """What the sandbox's copy of the workspace holds, as far as the harness knows.

    ``None`` means unknown (never synced, or the sandbox was restarted or a command's
    changes were refused): the next :meth:`outgoing` is then a full copy.
    """

    def __init__(self, workspace: Workspace, now: Callable[[], int] = time.time_ns) -> None:
        self.workspace = workspace
        self._now = now
        self._known: dict[str, Signature | None] | None = None
        # The workspace as the last command got it: each file's signature then, and the
        # digest of what was sent where the signature alone cannot tell a later write
        # within the clock's resolution (see RACY_NS). What a command brings back for a
        # path that changed here since is a conflict: the newer write, here, wins.
        self._base: dict[str, tuple[Signature | None, bytes | None]] | None = None
        self._usage: tuple[int, int] | None = None  # (entries, bytes) at the last send
        self._present: set[str] = set()
        self.conflicts: list[str] = []  # the paths kept by the last apply (for the page)

    def invalidate(self) -> None:
        self._known = None
        self._base = None

    def outgoing(self) -> Outgoing:
        """Scan the workspace and return what the sandbox lacks; from then on the view
        assumes the sandbox has it."""
        started = self._now()
        dirs, files = _scan(self.workspace.root)
        full = self._known is None
        known = self._known or {}
        send: list[tuple[str, bytes]] = []
        base: dict[str, tuple[Signature | None, bytes | None]] = {}
        for path, sig in files.items():
            digest = None
            if full or known.get(path) is None or known.get(path) != sig:
                try:
                    with open(self._real(path), "rb") as f:
                        data = f.read()
                except OSError:  # gone since the scan: the next command sends it
                    files[path] = None
                    continue
                send.append((path, data))
                if _settled(sig, started) is None:
                    digest = _digest(data)
            base[path] = (sig, digest)
        self._base = base
        self._usage = (len(files) + len(dirs), sum(sig[1] for sig in files.values() if sig))
        self._present = set(files) | set(dirs)
        present = set(files) | set(dirs)
        removed = [] if full else sorted(p for p in known if p not in present)
        self._known = {p: _settled(sig, started) for p, sig in files.items()}
        self._known.update({d: (0, 0, 0) for d in dirs})
        return Outgoing(full, dirs, send, removed)

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
        known = self._known if self._known is not None else {}
        kept = self._conflicts(changes)
        if kept:
            self.conflicts = sorted(kept)
            notes += [f"{p}: kept the workspace's version, which changed (a page or tool write) "
                      "while the command ran; the command's change to it was not applied"
                      for p in self.conflicts]
            changes = _without(changes, kept)
            for path in kept:  # the sandbox's copy differs: send it again next time
                for k in [k for k in known if k == path or k.startswith(path + "/")]:
                    known[k] = None
        for path in sorted(changes.removed, key=lambda p: -p.count("/")):
            notes += self._attempt(path, _remove)
            known.pop(path, None)
            for child in [k for k in known if k.startswith(path + "/")]:
                known.pop(child)
        for path in sorted(changes.dirs, key=lambda p: p.count("/")):
            notes += self._attempt(path, _make_dir)
            known[path] = (0, 0, 0)
        started = self._now()
        for path, data in changes.files:
            notes += self._attempt(path, functools.partial(_write, data=data))
            known[path] = _settled(_signature(self._real(path)), started)
        return notes

    def _conflicts(self, changes: Changes) -> set[str]:
        """The paths of ``changes`` that changed in the workspace since they were sent."""
        if self._base is None:
            return set()
        kept = set()
        for path in [*changes.removed, *changes.dirs, *(p for p, _ in changes.files)]:
            real = self._real_or_none(path)
            if real is None or (path in changes.removed and not os.path.lexists(real)):
                continue  # removed on both sides: the same outcome
            if self._changed_here(path, real):
                kept.add(path)
        return kept

    def _changed_here(self, path: str, real: str) -> bool:
        assert self._base is not None
        try:
            st = os.stat(real, follow_symlinks=False)
        except OSError:  # gone: a conflict only if it was there when sent
            return path in self._base
        if stat.S_ISDIR(st.st_mode):  # a change of anything below it
            return any(self._changed_here(f"{path}/{e.name}", e.path) for e in os.scandir(real))
        if path not in self._base:
            return True  # made here while the command ran
        sig, digest = self._base[path]
        if (st.st_mtime_ns, st.st_size, st.st_ino) != sig:
            return True
        if digest is None:
            return False
        try:  # a write within the clock's resolution keeps the signature: compare bytes
            with open(real, "rb") as f:
                return _digest(f.read()) != digest
        except OSError:
            return True

    # -- helpers ---------------------------------------------------------------

    def _check(self, changes: Changes, budget: int) -> str | None:
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
        if self._usage is not None:
            entries, size = self._usage
            made = [*changes.dirs, *(f for f, _ in changes.files)]
            entries += sum(p not in self._present for p in made)
            entries -= sum(p in self._present for p in changes.removed)
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
            return [f"{path}: not copied back ({exc})"]
        return []


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _without(changes: Changes, kept: set[str]) -> Changes:
    """``changes`` less every change at or below a kept path."""
    def free(path: str) -> bool:
        return not any(path == k or path.startswith(k + "/") for k in kept)
    return Changes(dirs=[d for d in changes.dirs if free(d)],
                   files=[(p, b) for p, b in changes.files if free(p)],
                   removed=[r for r in changes.removed if free(r)], skipped=changes.skipped)


def _scan(root: str) -> tuple[list[str], dict[str, Signature | None]]:
    """Every directory and regular file below ``root``, as workspace paths."""
    dirs: list[str] = []
    files: dict[str, Signature | None] = {}
    todo = [(root, MOUNT)]
    while todo:
        real, shown = todo.pop()
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = f"{shown}/{entry.name}"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                dirs.append(path)
                todo.append((entry.path, path))
            elif stat.S_ISREG(st.st_mode):
                files[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
    dirs.sort(key=lambda p: (p.count("/"), p))
    return dirs, files


def _settled(sig: Signature | None, sent_at: int) -> Signature | None:
    """``sig``, or None when the file changed too close to ``sent_at`` to be sure."""
    if sig is None or sig[0] >= sent_at - RACY_NS:
        return None
    return sig


def _signature(real: str) -> Signature | None:
    try:
        st = os.stat(real, follow_symlinks=False)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _size(real: str | None) -> int:
    try:
        return os.stat(real, follow_symlinks=False).st_size if real else 0
    except OSError:
        return 0


def _remove(real: str) -> None:
    if os.path.isdir(real) and not os.path.islink(real):
        shutil.rmtree(real)
    elif os.path.lexists(real):
        os.unlink(real)


def _make_dir(real: str) -> None:
    if os.path.lexists(real) and not os.path.isdir(real):
        os.unlink(real)
    os.makedirs(real, exist_ok=True)


def _write(real: str, *, data: bytes) -> None:
    if os.path.isdir(real) and not os.path.islink(real):
        shutil.rmtree(real)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    with open(real, "wb") as f:
        f.write(data)
