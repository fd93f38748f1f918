"""The change journal: every change to ``/work``, recorded once, in order, with its cause.

The harness does not find out what changed by looking at everything: it is told. A
:class:`Feed` reports the filesystem's changes as they happen (in the worker, the hooks on
Pyodide's MEMFS, embed/shared/fs-hooks.mjs, through embed/worker/journal.mjs; on CPython,
where no such hook exists, harness/runtime/scan_feed.py compares the tree with its last look). The
:class:`Journal` numbers them and keeps the latest ones for its readers:

- a reader keeps a *position* and asks for what came :meth:`~Journal.since` it (the
  sandbox's copy of ``/work`` is kept in step this way, with no tree scan);
- the changes of one call (a tool call, a page call) as one set (:meth:`~Journal.of`);
- a *watcher* (:meth:`~Journal.watch`) is told every change as it is drained, with its
  cause; :meth:`~Journal.captured` says whether that cause was a checkpointed call (a
  run's tool call, a revert) or not (the page's ``page:<op>:<id>``, an unknown cause):
  harness/workspace/checkpoints.py tells from this who changed a path after a run touched it;
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
import contextvars
import itertools
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

KINDS = ("created", "modified", "deleted", "renamed", "dir_created", "dir_deleted",
         "mode_changed")
CAPACITY = 200_000  # changes kept for readers; one command may bring back 100,000
CALLS_KEPT = 64  # calls whose change sets are kept (a run's tool calls, the page's last)
CAPTURED_KEPT = 64  # checkpointed causes remembered (a call's changes are drained when it ends)


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


# A path's state before a checkpointed call first changed it (harness/workspace/checkpoints.py):
# (path, kind "absent" | "file" | "dir", a file's bytes, its mode, complete: everything
# below the path at that moment is captured too).
Before = tuple[str, str, bytes | None, int | None, bool]


class Feed(Protocol):
    """Where changes come from. ``drain`` returns the raw changes since the last drain,
    ``(kind, path, source, cause)`` each, and whether some were lost (too many between
    two drains): then every reader must resync.

    While a cause is set with ``capture``, the feed also keeps the *pre-image* of each
    path on its first change since ``new_epoch`` (taken before the change, at the
    hooks), handed out by ``befores``."""

    def drain(self) -> tuple[list[tuple[str, str, str | None, str]], bool]: ...

    def set_cause(self, cause: str, capture: bool = False) -> None: ...

    def new_epoch(self) -> None: ...

    def befores(self) -> list[Before]: ...


class Journal:
    def __init__(self, feed: Feed, capacity: int = CAPACITY) -> None:
        self._feed = feed
        self._changes: deque[Change] = deque(maxlen=capacity)
        self._next = 0  # the seq the next change gets
        self._floor = 0  # the oldest position a reader may still read from
        self._calls: OrderedDict[str, dict[str, str]] = OrderedDict()
        self._moved: dict[str, dict[str, str]] = {}  # cause → renamed path → its source
        # The cause of the current task's changes, and its capture flag (a context
        # variable of the journal's own); what the feed was last told.
        self._current: contextvars.ContextVar[tuple[str, bool]] = contextvars.ContextVar(
            "pyharness_journal_cause", default=("", False))
        self._told: tuple[str, bool] = ("", False)
        self._readers: weakref.WeakSet[Reader] = weakref.WeakSet()
        self._captured: OrderedDict[str, None] = OrderedDict()
        self._watchers: list[Callable[[list[Change] | None], None]] = []

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

    def captured(self, cause: str) -> bool:
        """Whether ``cause`` was entered as a checkpointed call (``capture``: a run's tool
        call or a revert), as opposed to the page's calls and unknown causes."""
        return cause in self._captured

    def watch(self, watcher: Callable[[list[Change] | None], None]) -> None:
        """Tell ``watcher`` every change as it is drained, in order (None: some were lost
        and who made them is unknown). It must not call back into the journal."""
        self._watchers.append(watcher)

    # -- writing ------------------------------------------------------------

    @contextlib.contextmanager
    def cause(self, cause: str, capture: bool = False) -> Iterator[None]:
        """Attribute the changes made meanwhile to ``cause`` (nested: restored after). A
        cause entered anew is a new call: what an earlier call of that name changed is
        not its set. ``capture``: keep the pre-images of what it changes (a checkpointed
        call: a run's tool call, a revert). The cause is the current task's (a context
        variable): calls run at once in tasks of their own (subagents) each keep theirs,
        the feed told at each switch between them (:meth:`resume`)."""
        self._pull()
        if cause != self._current.get()[0]:
            self._calls.pop(cause, None)
            self._moved.pop(cause, None)
        token = self._current.set((cause, capture))
        if capture:
            self._captured[cause] = None
            self._captured.move_to_end(cause)
            while len(self._captured) > CAPTURED_KEPT:
                self._captured.popitem(last=False)
        self._tell_feed()
        try:
            yield
        finally:
            self._pull()
            self._current.reset(token)
            self._tell_feed()

    def resume(self) -> None:
        """The current task goes on after another ran (harness/agent.py calls this for
        calls run at once): what was changed meanwhile is the other's, from here on the
        changes are this task's cause's."""
        if self._current.get() != self._told:
            self._pull()
            self._tell_feed()

    def _tell_feed(self) -> None:
        self._told = self._current.get()
        self._feed.set_cause(*self._told)

    def new_epoch(self) -> None:
        """Pre-images are taken afresh: a path's next change is its first again."""
        self._pull()
        self._feed.new_epoch()

    def befores(self) -> list[Before]:
        """The pre-images taken since the last call, in the order they were taken."""
        self._pull()
        return self._feed.befores()

    def _pull(self) -> None:
        raw, lost = self._feed.drain()
        if lost:
            self._floor = self._next + 1  # every reader resyncs
            self._next += 1
            self._changes.clear()
            for watcher in self._watchers:
                watcher(None)
        drained = []
        for kind, path, source, cause in raw:
            if len(self._changes) == self._changes.maxlen:
                self._floor = self._changes[0].seq + 1
            change = Change(self._next, kind, path, source, cause)
            self._changes.append(change)
            drained.append(change)
            self._next += 1
            if cause:
                self._note(change)
        if drained:
            for watcher in self._watchers:
                watcher(drained)
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
