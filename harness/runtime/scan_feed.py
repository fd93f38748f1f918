"""The change journal's CPython feed (:class:`ScanFeed`), beside the CPython runtime: no
hook tells of a write on a real filesystem, so it looks at the tree. In the worker the
journal is fed by the filesystem's hooks instead (harness/runtime/pyodide.py's
``JsFeed``)."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable

from ..workspace.journal import Before
from ..workspace.paths import MOUNT, ancestors, real_path


class ScanFeed:
    """The CPython feed: no hook tells of a write on a real filesystem, so each drain
    compares the tree with the last one (a file's mtime, size and inode; a file written
    within the clock's resolution of the last look is compared by its bytes, as git
    treats "racily clean" index entries). Order within one drain is by path; causes are
    the cause set at the drain. In the worker the journal is fed by the filesystem's
    hooks instead (exact, in order, and never a scan).

    Pre-images come from the last look, which keeps each file's bytes (CPython is the
    tier of tests and tools, where a copy of the tree in memory is affordable)."""

    RACY_NS = 5_000_000

    def __init__(self, root: str, now: Callable[[], int] = time.time_ns) -> None:
        self._root = root
        self._now = now
        self._cause = ""
        self._capture = False
        self._seen: dict[str, tuple[int, int, int] | None] | None = None
        self._modes: dict[str, int] = {}
        self._bytes: dict[str, bytes] = {}  # the last look's file contents
        self._digests: dict[str, bytes] = {}
        self._taken: set[str] = set()  # paths with a pre-image in this epoch
        self._whole: set[str] = set()  # ... of which everything below is known too
        self._befores: list[Before] = []
        self.scans = 0

    def set_cause(self, cause: str, capture: bool = False) -> None:
        self._cause = cause
        self._capture = capture

    def new_epoch(self) -> None:
        self._taken.clear()
        self._whole.clear()
        self._befores = []

    def befores(self) -> list[Before]:
        out, self._befores = self._befores, []
        return out

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]:
        started = self._now()
        modes_before = self._modes
        now = self._scan()
        before = self._seen
        self._seen = now
        if before is None:  # the first look: where the journal starts
            self._remember(now, None, started)
            return [], False
        out: list[tuple[str, str, str | None, str]] = []
        for path in sorted(set(now) | set(before)):
            if path not in now:
                gone = "dir_deleted" if before[path] is None else "deleted"
                out.append((gone, path, None, self._cause))
                continue
            sig = now[path]
            if path not in before:
                out.append(("dir_created" if sig is None else "created", path, None, self._cause))
                continue
            was = before[path]
            if (was is None) != (sig is None):  # a file and a folder traded places
                out.append(("dir_deleted" if was is None else "deleted", path, None, self._cause))
                out.append(("dir_created" if sig is None else "created", path, None, self._cause))
            elif sig is not None and (sig != was or self._racy_changed(path)):
                out.append(("modified", path, None, self._cause))
            elif self._modes.get(path) != modes_before.get(path):
                out.append(("mode_changed", path, None, self._cause))
        if self._capture:
            for kind, path, _, _ in out:
                self._take(path, kind, before, modes_before)
        self._remember(now, before, started)
        return out, False

    def _take(self, path: str, kind: str, before: dict[str, tuple[int, int, int] | None],
              modes: dict[str, int]) -> None:
        """The pre-image of ``path`` from the last look, on its first change."""
        if path in self._taken or any(a in self._whole for a in ancestors(path)):
            return
        self._taken.add(path)
        if path not in before:
            state: Before = (path, "absent", None, None, True)
        elif before[path] is None:
            state = (path, "dir", None, modes.get(path), kind != "mode_changed")
        else:
            state = (path, "file", self._bytes.get(path, b""), modes.get(path), True)
        if state[4]:
            self._whole.add(path)
        self._befores.append(state)
        if state[1] == "dir" and state[4]:  # a folder taken whole: everything below it too
            taken, whole = set(self._taken), set(self._whole)  # as this epoch had them
            for below in sorted(p for p in before if p.startswith(f"{path}/")):
                if below in taken or any(a in whole for a in ancestors(below)
                                         if a.startswith(f"{path}/")):
                    continue  # taken earlier in this epoch: that pre-image stands
                self._taken.add(below)
                sig = before[below]
                self._whole.add(below)
                self._befores.append(
                    (below, "dir", None, modes.get(below), True) if sig is None
                    else (below, "file", self._bytes.get(below, b""), modes.get(below), True))

    def _racy_changed(self, path: str) -> bool:
        digest = self._digests.get(path)
        return digest is not None and digest != self._digest(path)

    def _remember(self, now: dict[str, tuple[int, int, int] | None],
                  before: dict[str, tuple[int, int, int] | None] | None, started: int) -> None:
        for path in [p for p in self._bytes if now.get(p, 0) is None or p not in now]:
            del self._bytes[path]
        for path, sig in now.items():
            if sig is not None and (before is None or before.get(path, 0) != sig
                                    or path in self._digests or path not in self._bytes):
                self._bytes[path] = self._read(path)
        self._digests = {p: hashlib.blake2b(self._bytes.get(p, b""), digest_size=16).digest()
                         for p, sig in now.items()
                         if sig is not None and sig[0] >= started - self.RACY_NS}

    def _digest(self, path: str) -> bytes:
        return hashlib.blake2b(self._read(path), digest_size=16).digest()

    def _read(self, path: str) -> bytes:
        try:
            with open(self._real(path), "rb") as f:
                return f.read()
        except OSError:
            return b""

    def _real(self, path: str) -> str:
        return real_path(self._root, path)

    def _scan(self) -> dict[str, tuple[int, int, int] | None]:
        """Every folder (None) and regular file (its signature) below the root; their
        modes in ``_modes``."""
        self.scans += 1
        found: dict[str, tuple[int, int, int] | None] = {}
        modes: dict[str, int] = {}
        todo = [(self._root, MOUNT)]
        while todo:
            real, shown = todo.pop()
            try:
                entries = list(os.scandir(real))
            except OSError:
                continue
            for entry in entries:
                path = f"{shown}/{entry.name}"
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    found[path] = None
                    todo.append((entry.path, path))
                elif stat.S_ISREG(st.st_mode):
                    found[path] = (st.st_mtime_ns, st.st_size, st.st_ino)
                else:
                    continue
                modes[path] = stat.S_IMODE(st.st_mode)
        self._modes = modes
        return found
