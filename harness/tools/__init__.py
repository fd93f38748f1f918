"""The built-in coding tools over the ``/work`` workspace: read, write, edit, ls, grep, find.

Every path goes through :meth:`Workspace.resolve`, so a path outside ``/work`` is an
``EACCES`` error result. Messages about one file name it as ``/work/...``; listings
from grep and find give paths relative to ``/work`` (``src/a.py``), which every tool
accepts as they are. Outputs are cut with :mod:`.truncate` and say how to get the rest.
"""

from __future__ import annotations

from .base import Tool
from .fileio import EditTool, ReadTool, WriteTool
from .search import FindTool, GrepTool, LsTool


def builtin_tools() -> list[Tool]:
    """One of each built-in file tool, in the order the model is told about them."""
    return [ReadTool(), WriteTool(), EditTool(), LsTool(), GrepTool(), FindTool()]
