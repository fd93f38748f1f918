"""The preview of the site the agent builds (``h.preview``, embed/page/preview.mjs), as the
harness sees it: the files it reads, under the model's own rules, and what each load of
it said, for the model's ``preview_errors`` tool.

- **Reads** (``{op: "read", path}``): a file of the workspace, resolved by the jail,
  refused when a ``read`` deny rule covers it (the model's own code runs in the preview
  and can show the model what it loads, so it loads only what the model may read), and
  bounded (:data:`MAX_FILE_BYTES`).
- **Reports** (``{op: "report", ...}``): the page tells each load's state and its
  console (errors, warnings, log lines; bounded there and here) and the newest
  ``file_change`` seq it had seen when the load began. The tool waits for a load that
  saw every change under the preview's root (up to :data:`WAIT_S`), so the model reads
  what its last write did, not the load before it.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat as st
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import FsError
from .fs_requests import error_reply
from .limits import clean_text
from .tools.base import Tool, ToolContext
from .workspace.jail import Workspace
from .workspace.paths import MOUNT

MAX_FILE_BYTES = 16 * 1024 * 1024  # a file the preview may load
MAX_ENTRIES = 200  # console entries kept of one load
MAX_ENTRY_CHARS = 2000
# a report's JSON: its entries (the page keeps 200 of up to 2,100 characters) and fields
MAX_REQUEST_CHARS = 2_000_000
MAX_OUTPUT_CHARS = 20_000  # what the tool gives the model
WAIT_S = 10.0  # how long the tool waits for the preview to load the last change
FIRST_WAIT_S = 3.0  # ... and for a first report (a widget opens its Preview on an HTML write)
LEVELS = ("error", "warn", "log")


class PreviewSite:
    """The preview's side in the session: its reads, and the newest load's report."""

    def __init__(self, workspace: Workspace, hidden: Callable[[str], bool] | None) -> None:
        self.workspace = workspace
        self.hidden = hidden  # the read rules' deny, on a workspace-relative path
        self.report: dict[str, Any] | None = None  # the newest load's
        self.root: str | None = None  # the preview's root (/work/...), once a load said it
        self.last_change = -1  # the seq of the newest file_change under the root
        self._news = asyncio.Event()

    # -- the page's requests --------------------------------------------------------

    def answer(self, request_json: str) -> bytes | str:
        """One request of the page's preview: a file's bytes, or JSON (``{ok, value}`` or
        ``{ok: false, code, message}``). Never raises."""
        try:
            request = json.loads(request_json) if len(request_json) <= MAX_REQUEST_CHARS else None
            if not isinstance(request, dict):
                raise FsError("EINVAL", "a preview request is {op, ...}")
            if request.get("op") == "read":
                return self.read(request.get("path"))
            if request.get("op") == "report":
                self.told(request)
                return json.dumps({"ok": True, "value": None})
            raise FsError("EINVAL", f"unknown preview op {str(request.get('op'))[:40]!r} "
                                    "(read, report)")
        except FsError as exc:
            return error_reply(exc.code, str(exc))
        except Exception as exc:  # a bug: one clear reply, never a hung request
            return error_reply("EIO", f"EIO: internal error in the preview "
                                      f"({type(exc).__name__}: {str(exc)[:300]})")

    def read(self, path: object) -> bytes:
        """A file of the workspace for the preview: the jail, the read rules, the size."""
        if not isinstance(path, str) or "\0" in path or len(path) > 4096:
            raise FsError("EINVAL", "a preview path is a workspace path without NUL")
        resolved = self.workspace.resolve(path)
        rel = resolved.shown[len(MOUNT) + 1:]
        if self.hidden is not None and rel and self.hidden(rel):
            raise FsError("EACCES", f"{resolved.shown}: a read rule of the page's "
                                    "denies it, so the preview does not load it")
        try:
            info = os.stat(resolved.real)
        except OSError:
            raise FsError("ENOENT", f"{resolved.shown}: no such file") from None
        if st.S_ISDIR(info.st_mode):
            raise FsError("EISDIR", f"{resolved.shown} is a folder")
        if info.st_size > MAX_FILE_BYTES:
            raise FsError("EFBIG", f"{resolved.shown} is {info.st_size:,} bytes; the "
                                   f"preview loads files of up to {MAX_FILE_BYTES:,}")
        with open(resolved.real, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:  # (it grew since the stat: still refused, never cut)
            raise FsError("EFBIG", f"{resolved.shown} is over {MAX_FILE_BYTES:,} bytes, the "
                                   "preview's limit")
        return data

    def told(self, report: dict[str, Any]) -> None:
        """A load's report: ``{root, entry, load, state, seen, entries: [{level, text}]}``."""
        entries = []
        for item in (report.get("entries") or [])[:MAX_ENTRIES]:
            if isinstance(item, dict) and item.get("level") in LEVELS:
                entries.append({"level": item["level"],
                                "text": clean_text(str(item.get("text", "")))[:MAX_ENTRY_CHARS]})
        root = report.get("root")
        state = report.get("state")
        seen = report.get("seen")
        if not isinstance(root, str) or state not in ("loading", "loaded", "failed", "closed"):
            raise FsError("EINVAL", "a preview report is {root, entry, load, state, seen, "
                                    "entries}")
        self.root = self.workspace.resolve(root).shown
        self.report = {"root": self.root, "entry": str(report.get("entry", ""))[:4096],
                       "load": int(report.get("load") or 0), "state": state,
                       "seen": seen if isinstance(seen, int) else -1, "entries": entries}
        self._news.set()

    def changed(self, path: str, seq: int) -> None:
        """A file_change event went to the page (the preview reloads on one under its root)."""
        if self.root is not None and (path == self.root or path.startswith(self.root + "/")
                                      or self.root == MOUNT):
            self.last_change = seq

    # -- the model's view -----------------------------------------------------------

    async def settled(self) -> dict[str, Any] | None:
        """The newest report of a load that saw every change under the root (waiting for
        it up to :data:`WAIT_S`, and for a first report up to :data:`FIRST_WAIT_S`), else
        the newest there is."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline = start + WAIT_S
        while True:
            report = self.report
            if report is not None and (report["state"] == "closed" or (
                    report["state"] != "loading" and report["seen"] >= self.last_change)):
                return report
            # (no report yet: one may be on its way, from a preview opened on the change)
            left = (deadline if report is not None else start + FIRST_WAIT_S) - loop.time()
            if left <= 0:
                return report
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), left)
            except TimeoutError:
                return self.report


class PreviewParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PreviewTool(Tool):
    name = "preview_errors"
    Params = PreviewParams
    description = (
        "What the page's live preview of the site in /work said when it last loaded: "
        "uncaught errors, unhandled rejections, failed loads (404, a module's syntax "
        "error), requests it blocked, and console output. The preview reloads after you "
        "change a file under its folder; this waits for that load. Use it after writing "
        "or changing HTML, CSS or JavaScript, and fix what it reports.")

    def __init__(self, site: PreviewSite) -> None:
        self._site = site

    async def run(self, params: PreviewParams, ctx: ToolContext) -> str:
        report = await self._site.settled()
        if report is None:
            return ("No preview is open: the page has not shown the site yet (it opens when "
                    "the user opens the Preview, or the page calls h.preview).")
        return describe(report, self._site.last_change)


def describe(report: dict[str, Any], last_change: int) -> str:
    """The model's text of one load's report (bounded)."""
    page = f"{report['root'].rstrip('/')}/{report['entry'].lstrip('/')}"
    if report["state"] == "closed":
        return f"The preview of {page} was closed; nothing is loaded."
    entries = report["entries"]
    counts = {level: sum(1 for e in entries if e["level"] == level) for level in LEVELS}
    head = f"Preview of {page} (load {report['load']}, {report['state']}"
    if report["state"] == "loading" or report["seen"] < last_change:
        head += "; it has not reloaded after your last change yet: this is the load before"
    head += f"): {counts['error']} errors, {counts['warn']} warnings, {counts['log']} log lines."
    if not entries:
        return head + "\nThe console is empty."
    lines = [head]
    size = len(head)
    for i, entry in enumerate(entries):
        line = f"{entry['level']}: {entry['text']}"
        if size + len(line) > MAX_OUTPUT_CHARS:
            lines.append(f"[... {len(entries) - i} more entries left out ...]")
            break
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)
