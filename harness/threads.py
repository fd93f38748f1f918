"""Threads: several conversations over one workspace, kept beside it.

Each thread is one JSON file in a state directory (in the worker ``/state/threads``,
which the persistent workspace writes through to OPFS with ``/work``): its title, the
model's history (provider-neutral messages) and the events the page needs to redraw it
(the transcript, text deltas merged). The history is what the next prompt continues;
the transcript is for people and may be longer (a compacted history does not shorten
it). A thread whose run was cut off (a reload mid-run) is repaired when it is loaded:
every tool call gets a result, so the history stays valid for any provider.

A thread is saved at every ``run_start``, ``tool_end`` and ``run_end``, so a save must
cost what changed, not the whole conversation: ``<id>.json.gz`` holds the thread as it
was at some point (its JSON, gzipped: a transcript of tool calls compresses 4-12 times,
and the file lives in the worker's memory as well as in OPFS), and ``<id>.jsonl`` one
line per save since then with what was added (new messages and events, text appended to
the last event; a history changed other than by appending, as a compaction or a cut
changes it, goes in the line whole, without the transcript). When the journal outgrows
its bound (a fourth of the thread's JSON, at least 256 kB), the thread is written whole
again and the journal starts over. Each file carries a generation, so a journal left
behind by a cut-off rewrite is recognised and ignored. A thread stored before the gzip
(``<id>.json``) is read as it is and replaced by its ``.json.gz`` when it is loaded. (An
older bundle reading a journal with a whole-history line stops its replay there: it
keeps the thread up to that line.)
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import time
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from .budget import Tally
from .errors import FsError, UsageError
from .messages import AssistantMessage, Message, ToolResult, UserMessage
from .tools.reads import Reads

INTERRUPTED = "Interrupted: the page was reloaded or closed before this tool call finished."
MAX_TITLE_CHARS = 200
MAX_THREADS = 1000
MAX_TRANSCRIPT_EVENTS = 20_000  # per thread; older events are dropped first
MAX_RUN_MARKS = 200  # runs per thread that h.threads.rewind can go back to
CURRENT_FILE = "current"  # the current thread's id
# A journal may grow to JOURNAL_MIN_BYTES, or to a JOURNAL_SHARE of its thread's JSON,
# before the thread is written whole: the journal lives in the worker's memory beside the
# gzipped thread, and a whole write costs the JSON's length (so at most a fourth of it
# is carried as lines: four times the per-byte cost of a whole write, amortised).
JOURNAL_MIN_BYTES = 256 * 1024
JOURNAL_SHARE = 4
# The whole thread's gzip level: 3 is within 20 % of 9's size at a fifteenth of its time
# (a 2.8 MB transcript: 183 kB in 7 ms on CPython, against dumping the JSON's 37 ms).
GZIP_LEVEL = 3
THREAD_SUFFIX = ".json.gz"
LEGACY_SUFFIX = ".json"  # a thread written before the gzip, read as it is
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class History(list[Message]):
    """A thread's messages (the agent's ``history`` is this very list). Growing it is what
    the journal appends; any other change (a compaction shortening old outputs or
    summarising turns, in place) counts in ``rewrites``, so that the next save writes the
    thread whole. A save then costs what was added, not the length of the conversation."""

    __slots__ = ("rewrites",)

    def __init__(self, messages: Any = ()) -> None:
        super().__init__(messages)
        self.rewrites = 0

    def _rewritten(self) -> None:
        self.rewrites += 1

    def __setitem__(self, index: Any, value: Any) -> None:
        self._rewritten()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        self._rewritten()
        super().__delitem__(index)

    def __imul__(self, n: Any) -> History:  # type: ignore[misc]  # list's own signature
        self._rewritten()
        return super().__imul__(n)

    def insert(self, index: Any, value: Message) -> None:
        self._rewritten()
        super().insert(index, value)

    def pop(self, index: Any = -1) -> Message:
        self._rewritten()
        return super().pop(index)

    def remove(self, value: Message) -> None:
        self._rewritten()
        super().remove(value)

    def clear(self) -> None:
        self._rewritten()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._rewritten()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._rewritten()
        super().reverse()


class Thread:
    def __init__(self, data: dict[str, Any]) -> None:
        self.id: str = data["id"]
        self.title: str = data.get("title", "")
        self.created: float = data.get("created", time.time())
        self.updated: float = data.get("updated", self.created)
        self.history = History(_MESSAGES.validate_python(data.get("history", [])))
        self.transcript: list[dict[str, Any]] = list(data.get("transcript", []))
        self.running: str | None = data.get("running")
        self.generation: int = data.get("generation", 0)
        # Where each run began: (run id, the history's length then), oldest first, for
        # h.threads.rewind; bounded (MAX_RUN_MARKS).
        self.runs: list[tuple[str, int]] = [(str(r), int(n)) for r, n in data.get("runs", [])]
        # What the thread's runs used, ever (a rewind takes back files, not spending).
        self.usage = Tally.load(data.get("usage"))
        self._dropped = 0  # transcript events dropped from the front, ever
        self._runs_dropped = 0  # run marks dropped from the front (MAX_RUN_MARKS), ever
        self._saved: tuple[History, int, int, int, int, int] | None = None  # journal_entry()
        self._saved_runs = (0, 0)  # the run marks then: how many, how many dropped

    def mark_saved(self) -> None:
        """What is on disk now: the history (the list, its rewrites and length), the
        number of transcript events, the length of the last one's delta, and the events
        dropped."""
        last = self.transcript[-1] if self.transcript else {}
        self._saved = (self.history, self.history.rewrites, len(self.history),
                       len(self.transcript), len(last.get("delta", "")), self._dropped)
        self._saved_runs = (len(self.runs), self._runs_dropped)

    def journal_entry(self) -> dict[str, Any] | None:
        """What changed since the last save, as one journal line; None when only a whole
        rewrite can say it (never saved, a run mark or an event it would name dropped
        meanwhile). Transcript events and run marks dropped from the front by their
        bounds are not a rewrite: the line says what was added, and its replay drops what
        the same bound drops (so a long thread's save costs what the run added, not the
        thread). A history changed other than by appending (a compaction, a cut, a
        repair) is carried whole in the line (``rewrite``): it is bounded by the model's
        window, where the transcript beside it may be 20,000 events."""
        if self._saved is None:
            return None
        history, rewrites, saved, events, tail, dropped = self._saved
        saved_runs, runs_dropped = self._saved_runs
        new_events = len(self.transcript) + self._dropped - events - dropped
        new_runs = len(self.runs) + self._runs_dropped - saved_runs - runs_dropped
        last = events - 1 - (self._dropped - dropped)  # the last event saved, where it is now
        if (not 0 <= new_events <= len(self.transcript)
                or not 0 <= new_runs <= len(self.runs) or (events and last < 0)):
            return None
        rewritten = (history is not self.history or history.rewrites != rewrites
                     or len(history) < saved)
        start = 0 if rewritten else saved
        entry: dict[str, Any] = {"generation": self.generation, "title": self.title,
                                 "updated": self.updated, "running": self.running,
                                 "history": [start, _MESSAGES.dump_python(
                                     self.history[start:], mode="json")],
                                 "transcript": [events, self.transcript[len(self.transcript)
                                                                        - new_events:]],
                                 "usage": self.usage.dump()}
        if rewritten:
            entry["rewrite"] = True
        if new_runs:
            entry["runs"] = [saved_runs, [list(r) for r in self.runs[len(self.runs) - new_runs:]]]
        if events:
            grown = self.transcript[last].get("delta", "")[tail:]
            if grown:
                entry["extend"] = grown
        return entry

    def replay(self, entry: dict[str, Any]) -> bool:
        """Apply one journal line; False (and nothing changed) if it does not follow on."""
        if entry.get("generation") != self.generation:
            return False
        at, messages = entry["history"]
        events, added = entry["transcript"]
        runs_at, runs = entry.get("runs", [len(self.runs), []])
        rewrite = entry.get("rewrite") is True
        if (at != (0 if rewrite else len(self.history)) or events != len(self.transcript)
                or runs_at != len(self.runs)):
            return False
        history = _MESSAGES.validate_python(messages)
        if "extend" in entry:
            if not events:
                return False
            last = dict(self.transcript[-1])
            last["delta"] = last.get("delta", "") + entry["extend"]
            self.transcript[-1] = last
        if rewrite:
            self.history[:] = history
        else:
            self.history.extend(history)
        self.transcript.extend(added)
        self.runs.extend((str(r), int(n)) for r, n in runs)
        # what the writer's bounds dropped since its last save (as record() and mark() do)
        if len(self.transcript) > MAX_TRANSCRIPT_EVENTS:
            del self.transcript[: len(self.transcript) - MAX_TRANSCRIPT_EVENTS]
        if len(self.runs) > MAX_RUN_MARKS:
            del self.runs[: len(self.runs) - MAX_RUN_MARKS]
        self.title, self.updated, self.running = entry["title"], entry["updated"], entry["running"]
        if "usage" in entry:
            self.usage = Tally.load(entry["usage"])
        return True

    def mark_unsaved(self) -> None:
        """Its next save is a whole rewrite (the runs were cut)."""
        self._saved = None

    def info(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created": self.created,
                "updated": self.updated, "messages": len(self.history),
                "usage": self.usage.dump()}

    def dump(self) -> dict[str, Any]:
        return {**self.info(), "history": _MESSAGES.dump_python(self.history, mode="json"),
                "transcript": self.transcript, "running": self.running,
                "generation": self.generation, "runs": [list(r) for r in self.runs]}

    def record(self, event: dict[str, Any]) -> None:
        """Keep an event for the transcript; consecutive text deltas become one."""
        last = self.transcript[-1] if self.transcript else None
        kind = event.get("type")
        if (kind in ("text_delta", "reasoning_delta") and last is not None
                and last.get("type") == kind and last.get("runId") == event.get("runId")):
            last["delta"] = last.get("delta", "") + event.get("delta", "")
        else:
            self.transcript.append(dict(event))
        if len(self.transcript) > MAX_TRANSCRIPT_EVENTS:
            drop = len(self.transcript) - MAX_TRANSCRIPT_EVENTS
            del self.transcript[:drop]
            self._dropped += drop
        self.running = None if kind == "run_end" else event.get("runId", self.running)
        if kind == "run_start" and not self.title:
            # An untitled thread is named after its first prompt, as chat apps do.
            self.title = _first_line(event.get("prompt"))
        self.updated = time.time()

    def repair(self) -> bool:
        """After a cut-off run: answer every tool call that has no result, and end the
        run in the transcript. Returns whether anything was repaired."""
        answered = {m.call_id for m in self.history if isinstance(m, ToolResult)}
        repaired: list[Message] = []
        changed = False
        for message in self.history:
            repaired.append(message)
            if isinstance(message, AssistantMessage):
                for call in message.tool_calls:
                    if call.id not in answered:
                        repaired.append(ToolResult(call_id=call.id, name=call.name,
                                                   output=INTERRUPTED, is_error=True))
                        changed = True
        if changed:
            self.history[:] = repaired
        if self.running is not None:
            seq = sum(1 for e in self.transcript if e.get("runId") == self.running)
            self.transcript.append({"type": "run_end", "runId": self.running, "seq": seq,
                                    "text": "", "stopReason": "aborted", "interrupted": True})
            self.running = None
            changed = True
        return changed


class ThreadStore:
    """The threads in ``directory`` (None: in memory only); one is current (the one
    ``h.prompt`` continues)."""

    def __init__(self, directory: str | None) -> None:
        self.directory = directory
        self.threads: dict[str, Thread] = {}
        self._journal_bytes: dict[str, int] = {}
        self._file_bytes: dict[str, int] = {}
        chosen = None if directory is None else self._load(directory)
        # The thread that was current (h.threads.switch), else the newest, else a new one.
        newest = max(self.threads.values(), key=lambda t: t.updated, default=None)
        self.current = chosen or newest or self.create("")

    def _load(self, directory: str) -> Thread | None:
        """Read every thread kept in ``directory``; the one that was current, if any."""
        os.makedirs(directory, exist_ok=True)
        names = set(os.listdir(directory))
        for name in sorted(names):
            if name.endswith(THREAD_SUFFIX):
                gzipped = True
            elif (name.endswith(LEGACY_SUFFIX)
                  and name[: -len(LEGACY_SUFFIX)] + THREAD_SUFFIX not in names):
                gzipped = False
            else:
                continue  # a journal, a temporary file, or a legacy file already rewritten
            path = os.path.join(directory, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
                text = gzip.decompress(data) if gzipped else data
                thread = Thread(json.loads(text))
                self._file_bytes[thread.id] = len(text)
            except (OSError, ValueError, KeyError, EOFError, zlib.error):
                continue  # a damaged file is skipped, never fatal (zlib.error: a damaged gzip)
            thread.mark_saved()
            self._replay_journal(thread)
            if thread.repair() or not gzipped:
                # (a thread stored before the gzip is written whole: replaced now)
                self._save(thread, whole=not gzipped)
            self.threads[thread.id] = thread
        try:
            with open(os.path.join(directory, CURRENT_FILE), encoding="utf-8") as f:
                return self.threads.get(f.read().strip())
        except OSError:
            return None

    def create(self, title: str = "") -> Thread:
        if len(self.threads) >= MAX_THREADS:
            raise UsageError(f"there are {MAX_THREADS} threads already; delete some first")
        now = time.time()
        thread = Thread({"id": uuid.uuid4().hex[:12], "title": _title(title), "created": now,
                         "updated": now})
        self.threads[thread.id] = thread
        self._save(thread)
        self._make_current(thread)
        return thread

    def get(self, thread_id: object) -> Thread:
        thread = self.threads.get(thread_id) if isinstance(thread_id, str) else None
        if thread is None:
            raise UsageError(f"no thread {str(thread_id)[:40]!r}; h.threads.list() has them")
        return thread

    def switch(self, thread_id: object) -> Thread:
        self._make_current(self.get(thread_id))
        return self.current

    def rename(self, thread_id: object, title: object) -> Thread:
        thread = self.get(thread_id)
        thread.title = _title(title)
        self._save(thread)
        return thread

    def delete(self, thread_id: object) -> None:
        thread = self.get(thread_id)
        del self.threads[thread.id]
        for path in () if self.directory is None else (
                self._path(thread.id), self._path(thread.id, LEGACY_SUFFIX),
                self._journal(thread.id)):
            with contextlib.suppress(OSError):
                os.unlink(path)
        if self.current is thread:
            newest = max(self.threads.values(), key=lambda t: t.updated, default=None)
            if newest is None:
                self.create("")
            else:
                self._make_current(newest)

    def listing(self) -> list[dict[str, Any]]:
        return sorted((t.info() for t in self.threads.values()), key=lambda i: -i["updated"])

    def save(self, thread: Thread) -> None:
        self._save(thread)

    def _path(self, thread_id: str, suffix: str = THREAD_SUFFIX) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, thread_id + suffix)

    def _make_current(self, thread: Thread) -> None:
        """The thread h.prompt continues, and the one a reload comes back to."""
        self.current = thread
        if self.directory is None:
            return
        path = os.path.join(self.directory, CURRENT_FILE)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(thread.id)
        os.replace(path + ".tmp", path)

    def _journal(self, thread_id: str) -> str:
        assert self.directory is not None
        return os.path.join(self.directory, f"{thread_id}.jsonl")

    def _save(self, thread: Thread, whole: bool = False) -> None:
        if self.directory is None:
            return  # in memory: the thread itself is all there is
        entry = None if whole else thread.journal_entry()
        if entry is not None:
            line = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
            size = self._journal_bytes.get(thread.id, 0) + len(line)
            if size <= max(JOURNAL_MIN_BYTES, self._file_bytes.get(thread.id, 0) // JOURNAL_SHARE):
                # os.open and one write: a text file object costs more than the line.
                fd = os.open(self._journal(thread.id), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                             0o644)
                try:
                    data = line.encode("utf-8")
                    while data:
                        data = data[os.write(fd, data):]
                finally:
                    os.close(fd)
                self._journal_bytes[thread.id] = size
                thread.mark_saved()
                return
        # The whole thread, in a new generation. Write then rename: a reader (the next
        # boot) never sees half a file; the old journal, if it outlives this, is ignored.
        thread.generation += 1
        path = self._path(thread.id)
        text = json.dumps(thread.dump(), ensure_ascii=False, separators=(",", ":")).encode()
        with open(path + ".tmp", "wb") as f:
            f.write(gzip.compress(text, compresslevel=GZIP_LEVEL, mtime=0))
        os.replace(path + ".tmp", path)
        for stale in (self._journal(thread.id), self._path(thread.id, LEGACY_SUFFIX)):
            with contextlib.suppress(OSError):
                os.unlink(stale)
        self._file_bytes[thread.id] = len(text)
        self._journal_bytes[thread.id] = 0
        thread.mark_saved()

    def _replay_journal(self, thread: Thread) -> None:
        """Bring a thread read from its file up to its last save. A line that does not
        follow on (torn by a crash, or of an older generation) ends the replay."""
        try:
            with open(self._journal(thread.id), encoding="utf-8") as f:
                text = f.read()
        except (OSError, ValueError):
            text = ""
        replayed = 0
        for line in text.split("\n"):
            try:
                if not line or not thread.replay(json.loads(line)):
                    break
            except (ValueError, KeyError, TypeError):
                break
            replayed += len(line) + 1
        if replayed:
            thread.mark_saved()
            self._journal_bytes[thread.id] = replayed
            if replayed < len(text):
                self._save(thread, whole=True)  # a torn line is dropped with a rewrite
        elif text:
            with contextlib.suppress(OSError):
                os.unlink(self._journal(thread.id))  # nothing in it follows on


def _first_line(prompt: object, limit: int = 80) -> str:
    line = next((s.strip() for s in str(prompt or "").splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _title(title: object) -> str:
    if not isinstance(title, str):
        raise UsageError("a thread title must be a string")
    return title.strip()[:MAX_TITLE_CHARS]


class Conversations:
    """The threads as the page uses them: which thread a run belongs to, its events
    recorded as they go out, ``h.threads`` requests, and what each thread's model has
    read (read before overwrite). The session's agent continues ``store.current.history``
    (the same list), whichever thread is current."""

    SAVE_ON = ("run_start", "tool_end", "run_end")  # the page may reload after any of these

    def __init__(self, store: ThreadStore, read_before_write: bool = False) -> None:
        self.store = store
        self._runs: dict[str, Thread] = {}
        # Per thread id, in memory only (after a reload the model reads a file again);
        # None: write and edit do not check (harness/tools/reads.py).
        self._reads: dict[str, Reads] | None = {} if read_before_write else None

    def started(self, run_id: str) -> None:
        self._runs[run_id] = self.store.current

    def mark(self, run_id: str) -> Thread:
        """The run begins now: where its thread's history stood (for rewind), and what
        its model reads from now on is the run's own (a rewind of it forgets that).
        Returns the thread it continues."""
        thread = self._runs.get(run_id, self.store.current)
        thread.runs.append((run_id, len(thread.history)))
        if len(thread.runs) > MAX_RUN_MARKS:
            drop = len(thread.runs) - MAX_RUN_MARKS
            del thread.runs[:drop]
            thread._runs_dropped += drop  # the next save says what was added (journal_entry)
        reads = self.reads(thread)
        if reads is not None:
            reads.run = run_id
        return thread

    def reads(self, thread: Thread | None = None) -> Reads | None:
        """What the model of ``thread`` (the current one) has read, kept while the thread
        is; None when read before overwrite is off."""
        if self._reads is None:
            return None
        for gone in [t for t in self._reads if t not in self.store.threads]:
            del self._reads[gone]  # a deleted thread's
        return self._reads.setdefault((thread or self.store.current).id, Reads())

    def rewind(self, run_id: str, revert: Callable[[list[str]], dict[str, Any]]) -> dict[str, Any]:
        """``h.threads.rewind``: cut the current thread back to before run ``run_id``
        (:func:`rewind`, its files taken back by ``revert``), forget what its model read
        in the runs cut, and save it."""
        thread = self.store.current
        reads = None if self._reads is None else self._reads.get(thread.id)
        value = rewind(thread, run_id, revert,
                       lambda runs: None if reads is None else reads.forget(runs))
        self.store.save(thread)
        return value

    def observe(self, message_json: str) -> None:
        """An event on its way to the page: record it in its run's thread (and save the
        thread at the points the durability contract names, before the event leaves)."""
        try:
            event = json.loads(message_json)
        except ValueError:
            return
        run_id = event.get("runId") if isinstance(event, dict) else None
        if not isinstance(run_id, str) or run_id not in self._runs:
            return
        thread = self._runs[run_id]
        thread.record(event)
        if event.get("type") in self.SAVE_ON:
            self.store.save(thread)
        if event.get("type") == "run_end":
            self._runs.pop(run_id, None)

    def request(self, request_json: str,
                rewind: Callable[[RewindRequest], str] | None = None) -> str:
        """One ``h.threads`` call: ``{op, id?, title?}`` → ``{ok, value}`` or an error.
        ``{op: "rewind", runId}`` goes to ``rewind`` (which answers it: it also takes
        files back, which the threads do not know of)."""
        try:
            request = json.loads(request_json)
            if not isinstance(request, dict):
                raise UsageError("a threads request is an object with an op")
            if request.get("op") == "rewind" and rewind is not None:
                return rewind(RewindRequest.from_request(request))
            value = self._dispatch(request)
        except (UsageError, ValueError) as exc:
            return json.dumps({"ok": False, "code": "EINVAL", "message": f"EINVAL: {exc}"})
        return json.dumps({"ok": True, "value": value}, ensure_ascii=False)

    def _dispatch(self, request: dict[str, Any]) -> Any:
        op = request.get("op")
        store = self.store
        if op == "list":
            return {"current": store.current.id, "threads": store.listing()}
        if op == "transcript":
            thread = store.get(request.get("id", store.current.id))
            return {"thread": thread.info(), "events": thread.transcript}
        if op in ("create", "switch", "delete") and self._runs:
            raise UsageError("a run is in progress; wait for it or cancel it first")
        if op == "create":
            thread = store.create(request.get("title", ""))
        elif op == "switch":
            thread = store.switch(request.get("id"))
        elif op == "rename":
            return store.rename(request.get("id"), request.get("title")).info()
        elif op == "delete":
            store.delete(request.get("id"))
            thread = store.current
        else:
            raise UsageError(f"unknown threads op {str(op)[:40]!r}; use list, create, switch, "
                             "rename, delete or transcript")
        return thread.info()


@dataclass(frozen=True)
class RewindRequest:
    """``h.threads.rewind(runId)``: ``{op: "rewind", runId}``. A run id that is not a
    string of 1 to 200 characters is kept as "" (no run has it: the rewind says so)."""

    run_id: str

    @classmethod
    def from_request(cls, request: dict[str, Any]) -> RewindRequest:
        run_id = request.get("runId")
        return cls(run_id if isinstance(run_id, str) and 0 < len(run_id) <= 200 else "")


def rewind(thread: Thread, run_id: str, revert: Callable[[list[str]], dict[str, Any]],
           forget: Callable[[list[str]], None]) -> dict[str, Any]:
    """Cut ``thread`` back to just before run ``run_id``'s prompt (that run and every
    later one go), so the next prompt continues from there. ``revert`` is given those
    runs first (it takes back their files and says how); ``forget`` is told them once
    cut. All or nothing: an ``FsError`` (ENOENT, EINVAL) changes nothing. The value is
    the revert's with ``removedMessages`` and ``rewound``. The caller saves the thread."""
    at = next((i for i, (r, _) in enumerate(thread.runs) if r == run_id), None)
    if at is None:
        raise FsError("ENOENT", f"no run {run_id!r} in the current thread (or it is "
                                "too old to rewind to)")
    start = thread.runs[at][1]
    prompt = next((e.get("prompt") for e in thread.transcript
                   if e.get("type") == "run_start" and e.get("runId") == run_id), None)
    first = thread.history[start] if start < len(thread.history) else None
    if not isinstance(first, UserMessage) or (prompt is not None and first.text != prompt):
        raise FsError("EINVAL", "the conversation was compacted since that run, so it "
                                "can no longer be cut there")
    later = [r for r, _ in thread.runs[at:]]
    reverted = revert(later)
    removed = len(thread.history) - start
    del thread.history[start:]
    cut = next((i for i, e in enumerate(thread.transcript)
                if e.get("type") == "run_start" and e.get("runId") == run_id),
               len(thread.transcript))
    del thread.transcript[cut:]
    del thread.runs[at:]
    forget(later)
    thread.mark_unsaved()
    return {**reverted, "removedMessages": removed, "rewound": later}
