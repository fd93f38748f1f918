"""file_change events in real Chromium: every change to /work, from every source (a
built-in tool, a shell command, python3, a page tool through h.fs, h.fs, importZip), from
the change journal, one event per path a call changed, in order, a tool call's before its
tool_end; h.subscribe hears them outside a run too. Page side: e2e/pages/rows/file_changes.mjs."""

from __future__ import annotations

import base64
import io
import zipfile
from typing import Any

from e2e.conftest import call


def test_file_changes_from_every_source_in_order(app: Any) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("z/zipped.txt", "z")
    heard = call(app, "file_changes.everySource", base64.b64encode(buf.getvalue()).decode())
    short = [(e["type"], e["path"], e["kind"], e["tool"]) for e in heard]
    page_tool_end = next(i for i, e in enumerate(heard)
                         if e["type"] == "tool_end" and e["tool"] == "save_note")
    assert short[:page_tool_end + 1] == [
        ("file_change", "/work/tool.txt", "created", "write"),
        ("tool_end", None, None, "write"),
        # the command removed what the write tool made, and made a folder and a file (in
        # the order the harness took its changes back: removals, folders, files)
        ("file_change", "/work/tool.txt", "deleted", "bash"),
        ("file_change", "/work/sh", "created", "bash"),
        ("file_change", "/work/sh/out.txt", "created", "bash"),
        ("tool_end", None, None, "bash"),
        ("file_change", "/work/py0.txt", "created", "bash"),
        ("file_change", "/work/py1.txt", "created", "bash"),
        ("file_change", "/work/py2.txt", "created", "bash"),
        ("tool_end", None, None, "bash"),
        # a page tool writes through the fs it is given: that tool call's change
        ("file_change", "/work/note.txt", "created", "save_note"),
        ("tool_end", None, None, "save_note"),
    ]
    changes = [e for e in heard if e["type"] == "file_change"]
    assert [e["seq"] for e in changes] == list(range(len(changes)))  # in order, no gaps
    run_id = heard[0]["runId"]
    for e in heard[:page_tool_end]:
        if e["type"] == "file_change":
            assert e["runId"] == run_id and e["callId"].startswith("call_")
    note = heard[page_tool_end - 1]
    assert note["callId"] == heard[page_tool_end]["callId"] and note["size"] == len("through h.fs")
    assert heard[0]["size"] == len("by the write tool") and heard[0]["entry"] == "file"
    assert heard[3]["entry"] == "dir" and heard[3]["size"] is None
    after = [(e["path"], e["kind"], e["from"], e["entry"]) for e in heard[page_tool_end + 1:]]
    assert after[:2] == [("/work/page.txt", "created", None, "file"),
                         ("/work/renamed.txt", "renamed", "/work/page.txt", "file")]
    assert after[2:4] == [("/work/d", "created", None, "dir"), ("/work/d/e", "created", None, "dir")]
    assert sorted(after[4:6]) == [("/work/d", "deleted", None, "dir"),
                                  ("/work/d/e", "deleted", None, "dir")]
    assert ("/work/z/zipped.txt", "created", None, "file") in after[6:]
    assert all(e["runId"] is None and e["callId"] is None for e in heard[page_tool_end + 1:])
