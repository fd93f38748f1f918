"""The CPython runtime: messages go to a callback, HTTP goes through httpx, the files
and threads are directories (the threads in memory unless one is given)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from ..config import ShellConfig
from ..errors import UsageError
from ..transport import HttpxTransport, Transport
from ..workspace.jail import Workspace
from ..workspace.journal import Journal
from . import Approver, PageToolCaller, ShellRunner, Storage
from .scan_feed import ScanFeed


class NativeRuntime:
    """``shell``, ``page_tools`` and ``approvals`` are for tests and embedders that have
    them (on CPython there is no page and no sandbox): without a runner the shell tool
    is left out, a page tool answers that it runs only in the browser, and a rule's
    ``ask`` is a deny."""

    def __init__(self, workspace: str, *, threads: str | None = None,
                 on_message: Callable[[dict[str, Any]], None] | None = None,
                 transport: Transport | None = None,
                 page_tools: PageToolCaller | None = None,
                 shell: ShellRunner | None = None,
                 approvals: Approver | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self._on_message = on_message
        self._transport = transport
        self._page_tools = page_tools
        self._shell = shell
        self._approvals = approvals
        if threads is not None and _within(threads, workspace):
            raise UsageError(f"the threads directory {threads} is inside the workspace "
                             f"{workspace}, where the model's tools could rewrite them; "
                             "keep it outside")
        self._storage = Storage(workspace, threads)
        self._journal: Journal | None = None

    def post(self, message_json: str) -> None:
        message = json.loads(message_json)
        self.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)

    @property
    def transport(self) -> Transport:
        if self._transport is None:
            self._transport = HttpxTransport()
        return self._transport

    @property
    def page_tools(self) -> PageToolCaller | None:
        return self._page_tools

    @property
    def approvals(self) -> Approver | None:
        return self._approvals

    @property
    def storage(self) -> Storage:
        return self._storage

    @property
    def journal(self) -> Journal:
        """On CPython the journal compares the tree at each look (no hook on a real
        filesystem tells of a write); in the worker it is told (harness/workspace/journal.py)."""
        if self._journal is None:
            os.makedirs(self._storage.workspace, exist_ok=True)
            self._journal = Journal(ScanFeed(self._storage.workspace))
        return self._journal

    def shell(self, config: ShellConfig, workspace: Workspace) -> ShellRunner | None:
        return self._shell

    def run_ended(self) -> None:
        """Nothing outlives a run here: a given shell runner keeps its own state."""


def _within(path: str, directory: str) -> bool:
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory
