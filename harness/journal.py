"""The change journal: every change to ``/work``, recorded once, in order, with its cause.

The harness does not find out what changed by looking at everything: it is told. A
:class:`Feed` reports the filesystem's changes as they happen (in the worker, the hooks on
Pyodide's MEMFS, embed/shared/fs-hooks.mjs, through embed/worker/journal.mjs; on CPython,
where no such hook exists, :class:`ScanFeed` compares the tree with its last look). The
:class:`Journal` numbers them and keeps the latest ones for its readers:

- a reader keeps a *position* and asks for what came :meth:`~Journal.since` it (the
  sandbox's copy of ``/work`` is kept in step this way, with no tree scan);
- the changes of one call (a tool call, a page call) as one set (:meth:`~Journal.of`);
- the journal is bounded: it keeps what its readers (:meth:`~Journal.reader`) have not
  read, at most ``capacity`` changes; a reader that fell further behind gets ``None``,
  a *resync*, and must look at the whole tree once, never an unbounded backlog.

A change's ``kind``: ``created``, ``modified``, ``deleted``, ``renamed`` (with its
``source``), ``dir_created``, ``dir_deleted``, ``mode_changed``. A ``renamed`` folder
renames everything below it, which is not listed again. Paths are workspace paths
(``/work/...``).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import stat
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from .jail import MOUNT

KINDS = ("created", "modified", "deleted", "renamed", "dir_created", "dir_deleted",
         "mode_changed")
CAPACITY = 200_000  # changes kept for readers; one command may bring back 100,000
CALLS_KEPT = 64  # calls whose change sets are kept (a run's tool calls, the page's last)


@dataclass(eq=False)  # compared (and hashed) by identity: the journal keeps a weak set
class Reader:
    """A reader's place in the journal: the changes before ``position`` are read (the
    journal forgets what every reader has read)."""

    position: int


@dataclass(frozen=True)
class Change:
    seq: int
    kind: str
    path: str
    source: str | None  # a rename's old path
    cause: str  # the call that made it: a tool call's id, "page:<op>", or "" (unknown)


class Feed(Protocol):
    """Where changes come from. ``drain`` returns the raw changes since the last drain,
    ``(kind, path, source, cause)`` each, and whether some were lost (too many between
    two drains): then every reader must resync."""

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]: ...

    def set_cause(self, cause: str) -> None: ...


class Journal:
    def __init__(self, feed: Feed, capacity: int = CAPACITY) -> None:
        self._feed = feed
        self._changes: deque[Change] = deque(maxlen=capacity)
        self._next = 0  # the seq the next change gets
        self._floor = 0  # the oldest position a reader may still read from
        self._calls: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._moved: dict[str, dict[str, str]] = {}  # cause → renamed path → its source
        self._cause = ""
        self._readers: weakref.WeakSet[Reader] = weakref.WeakSet()

    # -- reading ------------------------------------------------------------

    @property
    def position(self) -> int:
        """The position after every change so far (a reader's starting point)."""
        self._pull()
        return self._next

    def reader(self) -> Reader:
        """A new reader, at the current position (kept while the reader is)."""
        reader = Reader(self.position)
        self._readers.add(reader)
        return reader

    def since(self, position: int) -> list[Change] | None:
        """The changes from ``position`` on, in order; None when some of them are no
        longer kept (the reader must resync)."""
        self._pull()
        if position < self._floor or position > self._next:
            return None
        first = self._next - len(self._changes)
        return list(itertools.islice(self._changes, position - first, None))

    def of(self, cause: str) -> dict[str, str]:
        """What one call changed: path → its net kind (for example a file created and
        then written is ``created``; one created and deleted again is not listed)."""
        self._pull()
        return dict(self._calls.get(cause, {}))

    def changes(self, cause: str) -> list[tuple[str, str, str | None]]:
        """One call's changes in the order their paths were first touched, as
        ``(path, kind, source)``: a ``renamed`` path names its source, which is then not
        listed again as deleted."""
        net = self.of(cause)
        moved = self._moved.get(cause, {})
        sources = {moved[p] for p, kind in net.items() if kind == "renamed" and p in moved}
        return [(path, kind, moved.get(path) if kind == "renamed" else None)
                for path, kind in net.items() if not (kind == "deleted" and path in sources)]

    # -- writing ------------------------------------------------------------

    @contextlib.contextmanager
    def cause(self, cause: str) -> Iterator[None]:
        """Attribute the changes made meanwhile to ``cause`` (nested: restored after). A
        cause entered anew is a new call: what an earlier call of that name changed is
        not its set."""
        self._pull()
        before = self._cause
        if cause != before:
            self._calls.pop(cause, None)
            self._moved.pop(cause, None)
        self._cause = cause
        self._feed.set_cause(cause)
        try:
            yield
        finally:
            self._pull()
            self._cause = before
            self._feed.set_cause(before)

    def _pull(self) -> None:
        raw, lost = self._feed.drain()
        if lost:
            self._floor = self._next + 1  # every reader resyncs
            self._next += 1
            self._changes.clear()
        for kind, path, source, cause in raw:
            if len(self._changes) == self._changes.maxlen:
                self._floor = self._changes[0].seq + 1
            change = Change(self._next, kind, path, source, cause)
            self._changes.append(change)
            self._next += 1
            if cause:
                self._note(change)
        # Forget what every reader has read.
        keep = min((r.position for r in self._readers), default=self._next)
        while self._changes and self._changes[0].seq < keep:
            self._changes.popleft()
        self._floor = max(self._floor, min(keep, self._next))

    def _note(self, change: Change) -> None:
        calls = self._calls.setdefault(change.cause, {})
        self._calls.move_to_end(change.cause)
        while len(self._calls) > CALLS_KEPT:
            gone, _ = self._calls.popitem(last=False)
            self._moved.pop(gone, None)
        before = calls.get(change.path)
        net = _net(before, change.kind)
        if change.kind == "renamed" and change.source is not None:
            was = calls.pop(change.source, None)
            if was is None or was in ("modified", "mode_changed"):
                calls[change.source] = "deleted"  # it was there before the call
            if was in ("created", "dir_created"):
                net = was  # made and moved by the same call: made here
            if before in ("deleted", "dir_deleted"):
                net = "modified"  # moved over what was there (a write's temporary file)
            moved = self._moved.setdefault(change.cause, {})
            if was == "renamed" and change.source in moved:
                moved[change.path] = moved.pop(change.source)  # a→b→c: c from a
            elif net == "renamed":
                moved[change.path] = change.source
        if net is None:
            calls.pop(change.path, None)
        else:
            calls[change.path] = net


def _net(before: str | None, kind: str) -> str | None:
    """The net kind of a path after ``before`` then ``kind`` (None: no net change)."""
    if before in ("created", "renamed") and kind in ("modified", "mode_changed"):
        return before
    if before in ("created", "renamed") and kind == "deleted":
        return None  # made (or moved here) and gone again in the same call
    if before == "dir_created" and kind == "dir_deleted":
        return None
    if before == "deleted" and kind == "created":
        return "modified"
    return kind


class ScanFeed:
    """The CPython feed: no hook tells of a write on a real filesystem, so each drain
    compares the tree with the last one (a file's mtime, size and inode; a file written
    within the clock's resolution of the last look is compared by its bytes, as git
    treats "racily clean" index entries). Order within one drain is by path; causes are
    the cause set at the drain. In the worker the journal is fed by the filesystem's
    hooks instead (exact, in order, and never a scan)."""

    RACY_NS = 5_000_000

    def __init__(self, root: str, now: Callable[[], int] = time.time_ns) -> None:
        self._root = root
        self._now = now
        self._cause = ""
        self._seen: dict[str, tuple[int, int, int] | None] | None = None
        self._digests: dict[str, bytes] = {}
        self.scans = 0

    def set_cause(self, cause: str) -> None:
        self._cause = cause

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]:
        started = self._now()
        now = self._scan()
        before = self._seen
        self._seen = now
        if before is None:  # the first look: where the journal starts
            self._remember_racy(now, started)
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
        self._remember_racy(now, started)
        return out, False

    def _racy_changed(self, path: str) -> bool:
        digest = self._digests.get(path)
        return digest is not None and digest != self._digest(path)

    def _remember_racy(self, now: dict[str, tuple[int, int, int] | None], started: int) -> None:
        self._digests = {p: self._digest(p) for p, sig in now.items()
                         if sig is not None and sig[0] >= started - self.RACY_NS}

    def _digest(self, path: str) -> bytes:
        try:
            with open(self._real(path), "rb") as f:
                return hashlib.blake2b(f.read(), digest_size=16).digest()
        except OSError:
            return b""

    def _real(self, path: str) -> str:
        return self._root + path[len(MOUNT):]

    def _scan(self) -> dict[str, tuple[int, int, int] | None]:
        """Every folder (None) and regular file (its signature) below the root."""
        self.scans += 1
        found: dict[str, tuple[int, int, int] | None] = {}
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
        return found
