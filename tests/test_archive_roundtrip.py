"""A backup always restores: for generated workspaces (any name the jail lets in:
backslashes, spaces, control characters, unicode; nested, empty files and directories),
exportZip then importZip gives the same tree, into an empty workspace and with replace
into a different one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.limits import MAX_NAME_BYTES
from harness.workspace.archive import export_zip, import_zip
from harness.workspace.jail import Workspace

# The characters most likely to be misread by an archiver, then anything else the jail
# keeps as it is (no "/", no NUL, no lone surrogate: clean_text would replace it).
ODD = st.sampled_from(["\\", " ", "-", ".", "\t", "\n", "\r", "\x01", "\x7f", "é", "ß",
                       "\u202e", "\u0301", "😀", "\ufffd", ":", "*", "?", '"', "%"])
CHARS = st.one_of(ODD, st.characters(blacklist_categories=("Cs",),
                                     blacklist_characters="/\x00"))
NAMES = st.text(CHARS, min_size=1, max_size=12).filter(
    lambda n: n not in (".", "..") and len(n.encode()) <= MAX_NAME_BYTES)
# A tree is a dict (a directory: name -> subtree) whose leaves are bytes (a file).
TREES: st.SearchStrategy[dict[str, Any]] = st.dictionaries(NAMES, st.recursive(
    st.binary(max_size=40), lambda sub: st.dictionaries(NAMES, sub, max_size=4), max_leaves=8),
    max_size=4)


def build(root: str, tree: dict[str, Any]) -> None:
    for name, sub in tree.items():
        path = os.path.join(root, name)
        if isinstance(sub, dict):
            os.mkdir(path)
            build(path, sub)
        else:
            Path(path).write_bytes(sub)


def listing(root: str) -> dict[str, bytes | None]:
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        for name in dirnames:
            out[os.path.normpath(os.path.join(rel, name))] = None
        for name in filenames:
            out[os.path.normpath(os.path.join(rel, name))] = Path(dirpath, name).read_bytes()
    return out


@settings(max_examples=40, deadline=None, database=None, derandomize=True)
@given(TREES, TREES)
def test_export_then_import_gives_the_same_tree(tree: dict[str, Any],
                                                other: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source, empty, full = (Workspace(os.path.join(tmp, n)) for n in ("src", "new", "old"))
        build(source.root, tree)
        build(full.root, other)
        data = export_zip(source)
        expected = listing(source.root)
        counts = {"files": sum(v is not None for v in expected.values()),
                  "dirs": sum(v is None for v in expected.values())}
        assert import_zip(empty, data) == counts
        assert listing(empty.root) == expected
        assert import_zip(full, data, replace=True) == counts
        assert listing(full.root) == expected
