"""Checkpoints: every run can be taken back, exactly, and the taking back too.

A run's checkpoint holds, for each path the run's tool calls changed, its state before
the run's first change to it: the *pre-image* the change journal's feed captured at the
filesystem hooks (harness/workspace/journal.py, ``Journal.befores``), before the change happened:
absent, a folder (its mode), or a file (its bytes, content-addressed, and its mode). At
the run's end it also records each of those paths' state *after* the run (their
digests), so that a later change to them — a later run, the page, the user — is seen
by comparing contents, even across a reload.

:meth:`Checkpoints.revert` restores every path of a run to its pre-image, all or
nothing: it is refused (``ECONFLICT``, naming the paths) when any of them is no longer
as the run left it, unless ``cascade`` reverts the later runs that changed them first
(newest first, checked as a whole before anything is touched). A revert never takes
back what the run did not do: a path that anyone but a run (the page's ``h.fs``, an
unknown cause) changed after the run had touched it — during the run or after it — is
a conflict that no cascade resolves. Those changes are told by the change journal's
causes as they happen (:meth:`Checkpoints._observe`), kept with the checkpoint
(``foreign``) and in an append-only ``marks.jsonl`` beside it, so they count after a
reload too. ``force`` reverts anyway; what it overwrote is the revert's own pre-image,
so reverting the revert brings it back. A revert is itself a
checkpoint (its own pre-images captured by the same hooks), so reverting it is a redo.
Checkpoints are kept under ``/state/checkpoints`` (written through to OPFS with the rest
of ``/state``), bounded by :data:`MAX_CHECKPOINTS` and :data:`MAX_BYTES` of pre-images;
a run that fell out of the budget can no longer be reverted, and says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat as st
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..diffs import bounded, quote_name, unified
from ..errors import FsError
from .journal import Before, Change
from .paths import MOUNT, ancestors, below, real_path, remove, shown_path

MAX_CHECKPOINTS = 100
MAX_DROPPED = 1_000  # ids remembered as "no longer kept" (older ones: "no run")
MAX_BYTES = 128 * 1024 * 1024  # pre-image bytes kept, over every checkpoint
MAX_DIFF_FILE = 256 * 1024  # a file larger than this gets no text diff
MAX_DIFF_CHARS = 200_000  # h.diff's text over every path of a run
FORMAT = 1
# What a run's checkpoint names when the journal lost count of who changed what while the
# run went on (more changes at once than the feed keeps): nothing of it is known to be the
# run's alone.
LOST = "(unknown: too many changes at once while the run went on to tell whose they were)"


@dataclass(frozen=True)
class State:
    """A path's state at one moment: ``absent``, a ``dir`` or a ``file`` (its digest).
    ``complete``: for a pre-image, everything below the path at that moment is
    recorded as well (it was absent, a file, or a folder whose whole tree was captured);
    a folder whose mode alone changed is not."""

    kind: str
    digest: str | None = None
    mode: int | None = None
    size: int | None = None
    complete: bool = True

    def dump(self) -> list[Any]:
        return [self.kind, self.digest, self.mode, self.size, self.complete]

    @staticmethod
    def load(raw: list[Any]) -> State:
        kind, digest, mode, size, complete = raw
        return State(str(kind), digest, mode, size, bool(complete))

    def same(self, other: State) -> bool:
        """The same content (a folder's entries are compared path by path)."""
        return (self.kind, self.digest, self.mode) == (other.kind, other.digest, other.mode)


ABSENT = State("absent")


@dataclass
class Checkpoint:
    id: str  # the run's id, or "revert:<n>" for a revert
    reverts: list[str]  # what a revert took back (newest first); [] for a run
    before: dict[str, State]
    after: dict[str, State]
    reverted_by: str | None = None
    bytes: int = 0
    # Paths someone other than a run changed after this one had touched them (the page,
    # an unknown cause): reverting would take back what this run did not do.
    foreign: dict[str, None] = field(default_factory=dict)
    parent: str | None = None  # a subagent's: the run it ran in

    def dump(self) -> dict[str, Any]:
        return {"id": self.id, "reverts": self.reverts, "revertedBy": self.reverted_by,
                "bytes": self.bytes, "foreign": list(self.foreign), "parent": self.parent,
                "before": {p: s.dump() for p, s in self.before.items()},
                "after": {p: s.dump() for p, s in self.after.items()}}

    @staticmethod
    def load(raw: dict[str, Any]) -> Checkpoint:
        return Checkpoint(str(raw["id"]), [str(r) for r in raw.get("reverts") or []],
                          {p: State.load(s) for p, s in raw["before"].items()},
                          {p: State.load(s) for p, s in raw["after"].items()},
                          raw.get("revertedBy"), int(raw.get("bytes", 0)),
                          dict.fromkeys(str(p) for p in raw.get("foreign") or []),
                          raw.get("parent"))

    def touches(self, path: str) -> bool:
        return any(_related(path, p) for p in self.after)

    def within(self, run_id: str) -> bool:
        """Whether this is the checkpoint of a subagent of run ``run_id`` (at any depth)."""
        return self.parent is not None and self.id.startswith(f"{run_id}/")


@dataclass
class _Sub:
    """A subagent's run, open inside the open run: where its pre-images start in the
    run's, what its calls touched, what others' calls touched meanwhile (a subagent
    running at the same time), and what anyone but a run changed after it touched it."""

    start: int
    touched: set[str] = field(default_factory=set)
    others: set[str] = field(default_factory=set)
    foreign: dict[str, None] = field(default_factory=dict)


class Checkpoints:
    """The checkpoints of one workspace. ``root`` is the real folder of ``/work``;
    ``directory`` where they are kept (None: in memory only)."""

    def __init__(self, journal: Any, root: str, directory: str | None) -> None:
        self._journal = journal
        self._root = root
        self._dir = directory
        self._order: list[Checkpoint] = []
        self._by_id: dict[str, Checkpoint] = {}
        self._blobs: dict[str, bytes] = {}  # in memory when there is no directory
        self._refs: dict[str, int] = {}
        self._dropped: dict[str, None] = {}  # ids that fell out of the budget, oldest first
        self._reverts = 0
        self._open: str | None = None
        # While a run is open: the pre-images taken so far (a subagent's start and end
        # take them, so that its own start afresh) and its subagents' runs still open.
        self._taken: list[Before] = []
        self._subs: dict[str, _Sub] = {}
        # While a run is open: what its calls touched (and the folders above), and what
        # others changed after that, in or below or above a touched path.
        self._touched: set[str] = set()
        self._touched_above: set[str] = set()
        self._open_foreign: dict[str, None] = {}
        # Every kept checkpoint's paths (and the folders above them): path → ids.
        self._paths: dict[str, set[str]] = {}
        self._above: dict[str, set[str]] = {}
        self._marks = 0  # lines in marks.jsonl
        if directory is not None:
            self._load()
        journal.watch(self._observe)

    # -- recording -----------------------------------------------------------

    def begin(self, run_id: str) -> None:
        """A run starts: the feed captures pre-images afresh from here on."""
        self._journal.new_epoch()
        self._journal.befores()  # anything captured before belongs to no run
        self._open = run_id
        self._touched, self._touched_above, self._open_foreign = set(), set(), {}

    def end(self, run_id: str, reverts: list[str] | None = None) -> Checkpoint | None:
        """The run ended: keep what it changed (nothing: no checkpoint)."""
        if self._open != run_id:
            return None
        befores = self._taken + self._journal.befores()  # (the last changes are told first)
        self._open = None
        self._touched, self._touched_above, self._taken, self._subs = set(), set(), [], {}
        return self._keep(run_id, befores, list(reverts or []), self._open_foreign, None)

    def begin_sub(self, run_id: str) -> None:
        """A subagent's run starts inside the open run (its id ``<run>/<call>``): from here
        on its first change of a path takes that path's pre-image afresh."""
        if self._open is None:
            return
        self._taken += self._journal.befores()
        self._journal.new_epoch()
        self._subs[run_id] = _Sub(len(self._taken))

    def end_sub(self, run_id: str) -> Checkpoint | None:
        """A subagent's run ended: keep what it (and its own subagents) changed, as a
        checkpoint of its own within the open run's (which holds it too)."""
        sub = self._subs.get(run_id)
        if sub is None:
            return None
        self._taken += self._journal.befores()
        del self._subs[run_id]
        mine = [b for b in self._taken[sub.start:] if b[0] in sub.touched]
        foreign = dict(sub.foreign)
        # A path another subagent changed while this one ran, that this one changed too:
        # its pre-image may be the other's, so reverting this one alone is a conflict.
        foreign.update(dict.fromkeys(sorted(sub.touched & sub.others)))
        return self._keep(run_id, mine, [], foreign, self._open)

    def _keep(self, run_id: str, befores: list[Before],
              reverts: list[str], foreign: dict[str, None],
              parent: str | None) -> Checkpoint | None:
        """Keep the checkpoint of ``befores`` (the first of each path counts); None when
        nothing changed in the end."""
        if not befores:
            return None
        before: dict[str, State] = {}
        size = 0
        for path, kind, data, mode, complete in befores:
            if path in before:
                continue
            if kind == "file":
                content = data or b""
                digest = self._put(content)
                size += len(content)
                before[path] = State("file", digest, mode, len(content), complete)
            elif kind == "dir":
                before[path] = State("dir", None, mode, None, complete)
            else:
                before[path] = ABSENT
        after: dict[str, State] = {}
        for path, was in before.items():
            after.update(self._look(path, deep=was.complete))
        if all(before.get(p, ABSENT).same(now) for p, now in after.items()):
            for digest in {s.digest for s in before.values() if s.digest}:
                if digest not in self._refs:
                    self._drop_blob(digest)
            return None  # made and taken away again: no net change, nothing to revert
        for digest in {s.digest for s in before.values() if s.digest}:
            self._refs[digest] = self._refs.get(digest, 0) + 1
        checkpoint = Checkpoint(run_id, reverts, before, after, bytes=size, foreign=foreign,
                                parent=parent)
        self._order.append(checkpoint)
        self._by_id[run_id] = checkpoint
        self._index(checkpoint)
        self._trim()
        self._save(checkpoint)
        return checkpoint

    # -- who changed what ------------------------------------------------------------

    def _observe(self, changes: list[Change] | None) -> None:
        """The journal's changes as they are drained: a run's (a checkpointed cause) are
        what the open run touched; anyone else's (the page's ``page:...`` calls, an
        unknown cause) mark the checkpoints whose paths they touch. A cause that is both
        (a model naming its tool call like a page call) counts both ways: its run can
        then only be reverted with force, never at the page's cost."""
        if changes is None:
            if self._open is not None:
                self._open_foreign[LOST] = None
            return
        marks: list[tuple[str, str]] = []
        for change in changes:
            paths = (change.path,) if change.source is None else (change.path, change.source)
            cause = change.cause
            ours = self._journal.captured(cause)
            if not ours or not cause or cause.startswith("page:"):
                for path in paths:
                    marks += self._mark(path)
            if ours and self._open is not None:
                for path in paths:
                    self._touched.add(path)
                    self._touched_above.update(ancestors(path))
                for sub_id, sub in self._subs.items():  # (a subagent's: "<its run>/<call>")
                    (sub.touched if cause.startswith(f"{sub_id}/") else sub.others).update(paths)
        if marks:
            self._save_marks(marks)

    def _mark(self, path: str) -> list[tuple[str, str]]:
        """Someone other than a run changed ``path``: the open run and every kept
        checkpoint not reverted whose paths it is, is in or holds, are marked."""
        if self._open is not None and (path in self._touched or path in self._touched_above
                                       or any(a in self._touched for a in ancestors(path))):
            self._open_foreign[path] = None
            for sub in self._subs.values():
                if any(_related(path, p) for p in sub.touched):
                    sub.foreign[path] = None
        ids = set(self._paths.get(path, ())) | self._above.get(path, set())
        for above in ancestors(path):
            ids.update(self._paths.get(above, ()))
        out = []
        for checkpoint_id in ids:
            checkpoint = self._by_id.get(checkpoint_id)
            if checkpoint is None or checkpoint.reverted_by is not None:
                continue  # (one reverted is redone only by a revert, which sees the change)
            if path not in checkpoint.foreign:
                checkpoint.foreign[path] = None
                out.append((checkpoint_id, path))
        return out

    def _index(self, checkpoint: Checkpoint) -> None:
        for path in checkpoint.after:
            self._paths.setdefault(path, set()).add(checkpoint.id)
            for above in ancestors(path):
                self._above.setdefault(above, set()).add(checkpoint.id)

    def _unindex(self, checkpoint: Checkpoint) -> None:
        for path in checkpoint.after:
            for table, key in [(self._paths, path), *((self._above, a) for a in ancestors(path))]:
                ids = table.get(key)
                if ids is not None:
                    ids.discard(checkpoint.id)
                    if not ids:
                        del table[key]

    # -- reading ---------------------------------------------------------------

    def clear(self) -> None:
        """Forget every checkpoint (and the earlier contents only they held)."""
        while self._order:
            self._drop_oldest()
        if self._dir is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._dir, "marks.jsonl"))
            self._marks = 0
        self._save()

    def ids(self) -> list[str]:
        return [c.id for c in self._order]

    def listing(self) -> list[dict[str, Any]]:
        """Every checkpoint kept, oldest first."""
        return [{"runId": c.id, "revertedBy": c.reverted_by, "reverts": c.reverts,
                 "paths": len(c.after), "bytes": c.bytes, "parentRunId": c.parent}
                for c in self._order]

    def get(self, run_id: str) -> Checkpoint:
        checkpoint = self._by_id.get(run_id)
        if checkpoint is not None:
            return checkpoint
        if run_id in self._dropped:
            raise FsError("ENOENT", f"the checkpoint of run {run_id!r} is no longer "
                                    f"kept (at most {MAX_CHECKPOINTS} runs and "
                                    f"{MAX_BYTES // 2**20} MiB of earlier contents are); "
                                    "it cannot be reverted")
        raise FsError("ENOENT", f"no run {run_id!r} changed a file here (a run that "
                                "changed nothing has nothing to revert)")

    def diff(self, run_id: str) -> list[dict[str, Any]]:
        """What the run changed, per path: kind, sizes before and after, a unified diff
        for text (against the file as it is now, when it is still as the run left it)."""
        checkpoint = self.get(run_id)
        foreign = set(checkpoint.foreign)
        foreign_above = {a for p in foreign for a in ancestors(p)}
        out = []
        budget = MAX_DIFF_CHARS
        for path in sorted(checkpoint.after):
            # a path below a recorded one was absent before (below what was absent, a
            # file, or a folder whose whole tree was captured)
            was = checkpoint.before.get(path, ABSENT)
            now = checkpoint.after[path]
            if was.same(now):
                continue
            shown = now if now.kind != "absent" else was
            entry: dict[str, Any] = {
                "path": path, "kind": _kind(was, now), "entry": shown.kind,
                "sizeBefore": was.size, "sizeAfter": now.size,
                "changedSince": not self._current(path).same(now) or path in foreign
                                or path in foreign_above
                                or any(a in foreign for a in ancestors(path)),
                "diff": None}
            if budget > 0 and not entry["changedSince"] and "dir" not in (was.kind, now.kind):
                text = self._text_diff(path, was, now, budget)
                if text is not None:
                    entry["diff"] = text
                    budget -= len(text)
            out.append(entry)
        return out

    # -- reverting -------------------------------------------------------------

    def revertable(self, run_id: str) -> bool:
        """Whether the run has a checkpoint not yet reverted."""
        checkpoint = self._by_id.get(run_id)
        return checkpoint is not None and checkpoint.reverted_by is None

    def plan(self, run_id: str, cascade: bool = False, runs: list[str] | None = None,
             force: bool = False) -> list[Checkpoint]:
        """The checkpoints a revert of ``run_id`` takes back, newest first (``runs``: these,
        given newest first); raises ``ECONFLICT`` (naming the paths) when a path is not
        as they left it, or anyone but a run changed it after them (``force``: revert
        anyway)."""
        target = self.get(run_id)
        if target.reverted_by is not None:
            raise FsError("EINVAL", f"run {run_id!r} was reverted already (by "
                                    f"{target.reverted_by!r}: revert that to redo it)")
        chain = [target]
        if runs is not None:
            chain = [self.get(r) for r in reversed(runs)]
        elif cascade:  # (never the run a subagent ran in: that would take it back too)
            later = [c for c in self._order[self._order.index(target) + 1:]
                     if c.reverted_by is None and not target.within(c.id)]
            for c in later:  # transitively: a later run that touched what the chain did
                if any(c.touches(p) for member in chain for p in member.after):
                    chain.append(c)
        chain.reverse()
        virtual: dict[str, State] = {}
        gone: list[str] = []  # folders the virtual reverts removed whole
        conflicts: list[str] = []
        accounted = {p for c in chain for p in c.after}
        for c in chain:
            conflicts.extend(c.foreign)  # the page's (or an unknown) change: no cascade helps
            for path, expected in c.after.items():
                now = virtual.get(path) or (ABSENT if any(below(path, g) for g in gone)
                                            else self._current(path))
                if not now.same(expected):
                    conflicts.append(path)
                elif expected.kind == "dir" and path not in virtual:
                    # a folder the run made or replaced whole: nothing new may be in it
                    was = c.before.get(path)
                    if was is None or was.complete:
                        conflicts.extend(p for p in self._look(path, deep=True)
                                         if p not in accounted)
            for path, was in c.before.items():
                virtual[path] = was
                if was.kind != "dir" or was.complete:
                    gone.append(path)
                    for p in [p for p in virtual if below(p, path)]:
                        virtual[p] = c.before.get(p, ABSENT)
        for c in chain:
            missing = [s.digest for s in c.before.values()
                       if s.digest is not None and not self._has(s.digest)]
            if missing:
                raise FsError("EIO", f"the earlier contents of run {c.id!r} are missing "
                                     f"from the checkpoint store ({len(missing)} files); it "
                                     "cannot be reverted")
        if conflicts and not force:
            shown = sorted(set(conflicts))
            names = ", ".join(quote_name(n) for n in shown[:20]) + (
                f" and {len(shown) - 20} more" if len(shown) > 20 else "")
            by_page = [p for c in chain for p in c.foreign]
            hint = (" ({cascade: true} reverts the later runs first" if not cascade
                    else " (")
            hint += ("; a change not made by a run (the page's) is kept unless {force: "
                     "true}, which can itself be reverted)" if by_page else ")")
            raise FsError("ECONFLICT", f"changed since run {run_id!r}: {names}; "
                                       f"nothing was reverted{hint}")
        return chain

    def changes_of(self, chain: list[Checkpoint]) -> list[dict[str, Any]]:
        """What reverting ``chain`` changes, per path (for a dry run, and the result)."""
        net: dict[str, tuple[State, State]] = {}
        for c in chain:
            for path, was in c.before.items():
                start = net[path][0] if path in net else c.after.get(path, ABSENT)
                net[path] = (start, was)
        out = []
        for path in sorted(net):
            now, was = net[path]
            if not now.same(was):
                out.append({"path": path, "kind": _kind(now, was), "sizeBefore": now.size,
                            "sizeAfter": was.size})
        return out

    def answer(self, request: CheckpointRequest) -> Any:
        """The value of one parsed ``h.revert`` / ``h.diff`` request."""
        if request.op == "list":
            return self.listing()
        assert request.run_id is not None  # parse_request gives every other op one
        if request.op == "diff":
            return self.diff(request.run_id)
        return self.revert(request.run_id, request.dry_run, request.cascade,
                           force=request.force)

    def revert(self, run_id: str, dry_run: bool = False, cascade: bool = False,
               runs: list[str] | None = None, force: bool = False) -> dict[str, Any]:
        """Take run ``run_id`` back (and, with ``cascade``, the later runs that changed
        the same paths, newest first). Returns ``{revertId, reverted, changes}``: the
        revert's own id (revert it to redo; None for a dry run or when nothing changed),
        the runs taken back, and what changed per path. All or nothing. ``force``: over
        any conflict (what it overwrites is the revert's pre-image: reverting the revert
        brings it back)."""
        chain = self.plan(run_id, cascade, runs, force)
        changes = self.changes_of(chain) if not force else self._forced_changes(chain)
        reverted = [c.id for c in chain]
        # The subagents of a run taken back are taken back with it (and redone with it).
        inner = [c for c in self._order if c.reverted_by is None and c not in chain
                 and any(c.within(r) for r in reverted)]
        if dry_run:
            return {"revertId": None, "reverted": reverted, "changes": changes}
        self._reverts += 1
        revert_id = f"revert:{self._reverts}"
        while revert_id in self._by_id or revert_id in self._dropped:
            self._reverts += 1
            revert_id = f"revert:{self._reverts}"
        self.begin(revert_id)
        with self._journal.cause(revert_id, capture=True):
            try:
                for c in chain:
                    self._restore(c.before)
            except BaseException:
                # Put back what this revert changed so far (its own pre-images): a revert
                # either happens whole or not at all.
                undo = self._journal.befores()
                self._open = None
                with contextlib.suppress(OSError, KeyError):
                    self._restore({p: self._state_of(k, d, m, c) for p, k, d, m, c in undo})
                raise
        record = self.end(revert_id, reverts=reverted + [c.id for c in inner])
        changed = list(chain) + inner
        for c in chain + inner:
            c.reverted_by = revert_id if record is not None else "(no change)"
            for undone_id in c.reverts:  # a revert taken back: its runs are back (a redo)
                undone = self._by_id.get(undone_id)
                if undone is not None and undone.reverted_by == c.id:
                    undone.reverted_by = None
                    changed.append(undone)
        self._save(*changed)
        return {"revertId": revert_id if record is not None else None, "reverted": reverted,
                "changes": changes}

    def _forced_changes(self, chain: list[Checkpoint]) -> list[dict[str, Any]]:
        """What a forced revert changes: each path's pre-image against what is there."""
        net: dict[str, State] = {}
        for c in chain:
            net.update(c.before)  # the oldest run's pre-image last: it wins
        out = []
        for path in sorted(net):
            now, was = self._current(path), net[path]
            if not now.same(was):
                out.append({"path": path, "kind": _kind(now, was), "sizeBefore": now.size,
                            "sizeAfter": was.size})
        return out

    def _state_of(self, kind: str, data: bytes | None, mode: int | None,
                  complete: bool) -> State:
        if kind == "file":
            return State("file", self._put(data or b""), mode, len(data or b""), complete)
        if kind == "dir":
            return State("dir", None, mode, None, complete)
        return ABSENT

    # -- the filesystem ----------------------------------------------------------

    def _real(self, path: str) -> str:
        return real_path(self._root, path)

    def _current(self, path: str) -> State:
        try:
            info = os.lstat(self._real(path))
        except OSError:
            return ABSENT
        if st.S_ISDIR(info.st_mode):
            return State("dir", None, st.S_IMODE(info.st_mode))
        try:
            with open(self._real(path), "rb") as f:
                data = f.read()
        except OSError:
            return ABSENT
        return State("file", _digest(data), st.S_IMODE(info.st_mode), len(data))

    def _look(self, path: str, deep: bool) -> dict[str, State]:
        """``path``'s state now, and (``deep``) everything below it."""
        out = {path: self._current(path)}
        if deep and out[path].kind == "dir":
            for dirpath, dirs, files in os.walk(self._real(path)):
                shown = shown_path(self._root, dirpath)
                for name in dirs + files:
                    out[f"{shown}/{name}"] = self._current(f"{shown}/{name}")
        return out

    def _restore(self, before: dict[str, State]) -> None:
        # Deepest first: take away what must go (what was absent, a file where a folder
        # is, a folder captured whole), then shallowest first: put folders and files back.
        for path in sorted(before, key=lambda p: p.count("/"), reverse=True):
            was = before[path]
            now = self._current(path)
            if now.kind == "absent":
                continue
            # (now is not absent: a differing kind covers "was absent")
            if was.kind != now.kind or (was.kind == "dir" and was.complete
                                        and self._extra(path, before)):
                remove(self._real(path))
        for path in sorted(before, key=lambda p: p.count("/")):
            was = before[path]
            real = self._real(path)
            if was.kind == "dir":
                if not os.path.isdir(real):
                    os.mkdir(real)
                if was.mode is not None:
                    os.chmod(real, was.mode)
            elif was.kind == "file":
                data = self._get(was.digest or "")
                now = self._current(path)
                if now.digest != was.digest:
                    if now.kind == "file" and now.mode is not None and not now.mode & 0o200:
                        os.chmod(real, now.mode | 0o200)  # a read-only file is written too
                    with open(real, "wb") as f:
                        f.write(data)
                if was.mode is not None:
                    os.chmod(real, was.mode)

    def _extra(self, path: str, before: dict[str, State]) -> bool:
        """Whether the folder holds anything its pre-image did not."""
        real = self._real(path)
        for dirpath, dirs, files in os.walk(real):
            shown = shown_path(self._root, dirpath)
            if any(f"{shown}/{n}" not in before for n in dirs + files):
                return True
        return False

    def _text_diff(self, path: str, was: State, now: State, budget: int) -> str | None:
        old = self._get(was.digest) if was.digest else b""
        if now.kind == "file":
            try:
                with open(self._real(path), "rb") as f:
                    new = f.read(MAX_DIFF_FILE + 1)
            except OSError:
                return None
        else:
            new = b""
        if len(old) > MAX_DIFF_FILE or len(new) > MAX_DIFF_FILE or b"\0" in old + new:
            return None
        try:
            a, b = old.decode().splitlines(), new.decode().splitlines()
        except UnicodeDecodeError:
            return None
        shown = path[len(MOUNT) + 1:]
        # (names quoted: a newline in one cannot forge a line of the diff)
        lines: Iterator[str] = unified(a, b, None if was.kind == "absent" else f"a/{shown}",
                                       None if now.kind == "absent" else f"b/{shown}")
        return bounded(lines, budget)

    # -- the store -----------------------------------------------------------------

    def _put(self, data: bytes) -> str:
        digest = _digest(data)
        if self._dir is None:
            self._blobs[digest] = data
        else:
            blob = self._blob(digest)
            if not os.path.exists(blob):
                os.makedirs(os.path.dirname(blob), exist_ok=True)
                with open(f"{blob}.tmp", "wb") as f:
                    f.write(data)
                os.replace(f"{blob}.tmp", blob)
        return digest

    def _has(self, digest: str) -> bool:
        return digest in self._blobs if self._dir is None else os.path.exists(self._blob(digest))

    def _get(self, digest: str) -> bytes:
        if self._dir is None:
            return self._blobs[digest]
        with open(self._blob(digest), "rb") as f:
            return f.read()

    def _blob(self, digest: str) -> str:
        assert self._dir is not None
        return os.path.join(self._dir, "blobs", digest[:2], digest[2:])

    def _trim(self) -> None:
        total = sum(c.bytes for c in self._order)
        while self._order and (len(self._order) > MAX_CHECKPOINTS or total > MAX_BYTES):
            total -= self._drop_oldest().bytes

    def _drop_oldest(self) -> Checkpoint:
        gone = self._order.pop(0)
        del self._by_id[gone.id]
        self._unindex(gone)
        if self._dir is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._record(gone.id))
        self._dropped[gone.id] = None
        while len(self._dropped) > MAX_DROPPED:
            del self._dropped[next(iter(self._dropped))]
        for digest in {s.digest for s in gone.before.values() if s.digest}:
            self._refs[digest] -= 1
            if self._refs[digest] == 0:
                del self._refs[digest]
                self._drop_blob(digest)
        return gone

    def _drop_blob(self, digest: str) -> None:
        if self._dir is None:
            self._blobs.pop(digest, None)
        else:
            with contextlib.suppress(OSError):
                os.unlink(self._blob(digest))

    def _save(self, *changed: Checkpoint) -> None:
        """Write the checkpoints that changed (one file each: a run's end costs what it
        changed, not what every kept checkpoint holds) and the small index (their order)."""
        if self._dir is None:
            return
        os.makedirs(os.path.join(self._dir, "runs"), exist_ok=True)
        for checkpoint in changed:
            _write_json(self._record(checkpoint.id), checkpoint.dump())
        _write_json(os.path.join(self._dir, "index.json"),
                    {"format": FORMAT, "reverts": self._reverts, "dropped": list(self._dropped),
                     "order": [c.id for c in self._order]})

    def _save_marks(self, marks: list[tuple[str, str]]) -> None:
        """Append new marks (a checkpoint id and a path someone else changed) to
        marks.jsonl; rewritten whole when it holds mostly what is gone."""
        if self._dir is None:
            return
        path = os.path.join(self._dir, "marks.jsonl")
        live = sum(len(c.foreign) for c in self._order)
        os.makedirs(self._dir, exist_ok=True)
        if self._marks + len(marks) > 2 * live + 1000:
            marks = [(c.id, p) for c in self._order for p in c.foreign]
            with open(f"{path}.tmp", "w") as f:
                f.writelines(json.dumps(m, separators=(",", ":")) + "\n" for m in marks)
            os.replace(f"{path}.tmp", path)
            self._marks = len(marks)
            return
        with open(path, "a") as f:
            f.writelines(json.dumps(m, separators=(",", ":")) + "\n" for m in marks)
        self._marks += len(marks)

    def _load_marks(self) -> None:
        assert self._dir is not None
        try:
            with open(os.path.join(self._dir, "marks.jsonl")) as f:
                lines = f.readlines()
        except OSError:
            return
        self._marks = len(lines)
        for line in lines:
            with contextlib.suppress(ValueError, TypeError):
                checkpoint_id, path = json.loads(line)  # (a torn last line: skipped)
                checkpoint = self._by_id.get(str(checkpoint_id))
                if checkpoint is not None and isinstance(path, str):
                    checkpoint.foreign[path] = None

    def _record(self, checkpoint_id: str) -> str:
        assert self._dir is not None
        name = hashlib.sha256(checkpoint_id.encode("utf-8", "replace")).hexdigest()[:32]
        return os.path.join(self._dir, "runs", f"{name}.json")

    def _load(self) -> None:
        assert self._dir is not None
        try:
            with open(os.path.join(self._dir, "index.json")) as f:
                index = json.load(f)
            if index.get("format") != FORMAT:
                return
            order = [str(i) for i in index["order"]]
        except (OSError, ValueError, KeyError, TypeError):
            return  # unreadable: no checkpoints, never a failed boot
        for checkpoint_id in order:
            try:
                with open(self._record(checkpoint_id)) as f:
                    checkpoint = Checkpoint.load(json.load(f))
            except (OSError, ValueError, KeyError, TypeError):
                continue  # that one is lost; the others stand
            self._order.append(checkpoint)
        self._by_id = {c.id: c for c in self._order}
        self._dropped = dict.fromkeys(str(d) for d in index.get("dropped", [])[-MAX_DROPPED:])
        self._reverts = int(index.get("reverts", 0))
        for c in self._order:
            for digest in {s.digest for s in c.before.values() if s.digest}:
                self._refs[digest] = self._refs.get(digest, 0) + 1
            self._index(c)
        self._load_marks()


def _write_json(path: str, value: Any) -> None:
    # json.dumps, not json.dump: dump() streams through the pure-Python encoder, which
    # made the index of a long thread's checkpoints (its dropped ids) cost about 0.6 ms
    # at every run's end on CPython.
    text = json.dumps(value, separators=(",", ":"))
    with open(f"{path}.tmp", "w") as f:
        f.write(text)
    os.replace(f"{path}.tmp", path)


@dataclass(frozen=True)
class CheckpointRequest:
    """One ``h.revert`` / ``h.diff`` request: ``{op: "revert", runId, dryRun?, cascade?,
    force?}``, ``{op: "diff", runId}`` or ``{op: "list"}``."""

    op: Literal["revert", "diff", "list"]
    run_id: str | None = None  # every op but list has one
    dry_run: bool = False
    cascade: bool = False
    force: bool = False


def parse_request(text: str, enabled: bool) -> CheckpointRequest:
    """The request in the page's JSON ``text``, else an ``FsError`` (EINVAL) that says
    what is wrong. ``enabled``: whether checkpoints are on (when off, every well-formed
    request is refused as such, before its run id is looked at)."""
    try:
        data = json.loads(text) if len(text) <= 4096 else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("op"), str):
        raise FsError("EINVAL", "a checkpoint request is {op, runId, ...}")
    op = data["op"]
    if not enabled:
        raise FsError("EINVAL", "checkpoints are off (the checkpoints option is false)")
    if op == "list":
        return CheckpointRequest("list")
    run_id = data.get("runId")
    if not isinstance(run_id, str) or not 0 < len(run_id) <= 200:
        raise FsError("EINVAL", "runId must be the id of a run (a string)")
    if op == "diff":
        return CheckpointRequest("diff", run_id)
    if op != "revert":
        raise FsError("EINVAL", f"unknown checkpoint op {op[:40]!r} (revert, diff, list)")
    return CheckpointRequest("revert", run_id, bool(data.get("dryRun")),
                             bool(data.get("cascade")), bool(data.get("force")))


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _related(a: str, b: str) -> bool:
    return a == b or below(a, b) or below(b, a)


def _kind(was: State, now: State) -> str:
    if was.kind == "absent":
        return "created"
    if now.kind == "absent":
        return "deleted"
    if was.kind != now.kind or was.digest != now.digest:
        return "modified"
    return "mode_changed"


