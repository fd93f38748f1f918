"""docs/architecture.md is held to the tree: every module of the harness package, of
`embed/` and of `shell/` is named in one of its tables, and every module a table names
exists. A module added without its line (or a line left behind by a move) fails here,
with the line to write."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
# (folder, how a table names its files): `agent.py`, `workspace/jail.py` for harness/
# (relative to it); `page/options.mjs` for embed/; `shell/sandbox.mjs` for shell/.
TREES = {"harness": ROOT / "harness", "embed": ROOT / "embed", "shell": ROOT}
SOURCES = (".py", ".mjs", ".js", ".d.ts", ".json")


def modules() -> dict[str, str]:
    """name as the tables write it → the file, for every module that must be named."""
    out: dict[str, str] = {}
    for tree in ("harness", "embed"):
        base = TREES[tree]
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.name.endswith(SOURCES) and "__pycache__" not in path.parts:
                if path.name == "__init__.py":  # a package is named by its folder
                    name = f"{path.parent.relative_to(base).as_posix()}/"
                    if name == "./":
                        continue  # harness/__init__.py: the package itself
                else:
                    name = path.relative_to(base).as_posix()
                out[name] = path.relative_to(ROOT).as_posix()
    for path in sorted((ROOT / "shell").iterdir()):
        if path.is_file() and path.name.endswith(SOURCES):
            name = path.relative_to(ROOT).as_posix()
            out[name] = name
    return out


def table_names() -> set[str]:
    """Every `code` span in a table row of architecture.md."""
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("|")]
    return {m for row in rows for m in re.findall(r"`([^`]+)`", row)}


def test_every_module_is_named_in_a_table_of_architecture_md() -> None:
    named = table_names()
    missing = {name: file for name, file in modules().items() if name not in named}
    assert missing == {}, (
        "docs/architecture.md has no table row naming these modules: add a line "
        "`| `<name>` | <its concern> |` to the table of its package: " + repr(missing))


def test_every_module_a_table_names_exists() -> None:
    """A name that looks like a module of these trees (a path ending in a source suffix,
    under a folder of harness/, embed/ or shell/) is a file there."""
    known = modules()
    folders = {name.split("/")[0] for name in known if "/" in name}
    stale = sorted(
        name for name in table_names()
        if name.endswith(SOURCES) and "/" in name and name.split("/")[0] in folders
        and name not in known and not (ROOT / name).exists()
        and not (ROOT / "harness" / name).exists() and not (ROOT / "embed" / name).exists())
    assert stale == [], f"docs/architecture.md names modules that do not exist: {stale}"
