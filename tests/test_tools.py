"""The built-in file tools, driven the way the loop drives them: through ToolSet.execute."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ToolError
from harness.tools import builtin_tools
from harness.tools.base import ToolContext, ToolOutcome, ToolSet
from harness.tools.search import compile_glob
from harness.tools.truncate import (
    MAX_BYTES,
    cut_utf8,
    split_lines,
    truncate_head,
    truncate_line,
)
from harness.workspace.jail import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "root")


def call(ws: Workspace, name: str, **args: Any) -> ToolOutcome:
    tools = ToolSet(builtin_tools())
    return asyncio.run(tools.execute(name, json.dumps(args), ToolContext(ws)))


def ok(ws: Workspace, name: str, **args: Any) -> str:
    out = call(ws, name, **args)
    assert not out.is_error, out.output
    return out.output


def fail(ws: Workspace, name: str, **args: Any) -> str:
    out = call(ws, name, **args)
    assert out.is_error, out.output
    return out.output


def put(ws: Workspace, rel: str, content: str | bytes) -> Path:
    path = Path(ws.root, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode() if isinstance(content, str) else content
    path.write_bytes(data)
    return path


def numbered(n: int) -> str:
    return "".join(f"line{i}\n" for i in range(1, n + 1))


# ---------------------------------------------------------------------------
# the tool set


def test_builtin_tools_order_and_schemas() -> None:
    tools = builtin_tools()
    assert [t.name for t in tools] == ["read", "write", "edit", "ls", "grep", "find"]
    specs = {s.name: s.parameters for s in ToolSet(tools).specs()}
    assert specs["read"]["required"] == ["path"]
    assert specs["read"]["additionalProperties"] is False
    edit_item = specs["edit"]["$defs"]["Replacement"]["properties"]
    assert set(edit_item) == {"oldText", "newText"}
    assert "ignoreCase" in specs["grep"]["properties"]
    for tool in tools:
        assert tool.description
        props = specs[tool.name]["properties"]
        assert all(p.get("description") for p in props.values()), tool.name


# ---------------------------------------------------------------------------
# truncate helpers


def test_split_lines_treats_final_newline_as_terminator() -> None:
    assert split_lines("") == []
    assert split_lines("a") == ["a"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("a\fb\n") == ["a\fb"]


def test_truncate_head_line_limit_boundary() -> None:
    exact = truncate_head(numbered(2000))
    assert not exact.truncated and exact.shown_lines == 2000
    over = truncate_head(numbered(2001))
    assert over.truncated and over.truncated_by == "lines"
    assert over.shown_lines == 2000 and over.total_lines == 2001
    assert over.text.endswith("line2000")


def test_truncate_head_byte_limit_keeps_whole_lines() -> None:
    text = ("é" * 99 + "\n") * 300  # 199 bytes a line with its newline
    cut = truncate_head(text)
    assert cut.truncated_by == "bytes"
    assert cut.shown_lines == 257  # 257 * 199 - 1 <= 51200 < 258 * 199 - 1
    assert len(cut.text.encode()) == cut.shown_bytes <= MAX_BYTES
    assert cut.text.split("\n") == ["é" * 99] * 257


def test_truncate_head_partial_first_line_not_split_inside_a_character() -> None:
    cut = truncate_head("€" * 20000)  # 3 bytes each: 51200 falls inside a character
    assert cut.partial_line and cut.shown_lines == 0
    assert cut.text == "€" * 17066
    assert cut_utf8("a€", 2) == "a"
    assert truncate_head("x" * MAX_BYTES).truncated is False
    assert truncate_head("x" * (MAX_BYTES + 1)).partial_line


def test_truncate_line() -> None:
    assert truncate_line("abc", 5) == ("abc", False)
    text, cut = truncate_line("x" * 600)
    assert cut and text.startswith("x" * 500) and "[line truncated]" in text


# ---------------------------------------------------------------------------
# read


def test_read_basic_offset_limit(ws: Workspace) -> None:
    put(ws, "a.txt", "one\ntwo\nthree\n")
    assert ok(ws, "read", path="a.txt") == "one\ntwo\nthree"
    assert ok(ws, "read", path="/work/a.txt", offset=2) == "two\nthree"
    assert ok(ws, "read", path="a.txt", limit=1) == (
        "one\n\n[Showing lines 1-1 of 3. Use offset=2 to continue.]"
    )
    assert ok(ws, "read", path="a.txt", offset=2, limit=1) == (
        "two\n\n[Showing lines 2-2 of 3. Use offset=3 to continue.]"
    )
    assert ok(ws, "read", path="a.txt", offset=3, limit=5) == "three"


def test_read_exactly_2000_lines_is_not_truncated(ws: Workspace) -> None:
    put(ws, "f.txt", numbered(2000))
    out = ok(ws, "read", path="f.txt")
    assert out.endswith("line2000") and "[" not in out


def test_read_2001_lines_is_truncated_with_hint(ws: Workspace) -> None:
    put(ws, "f.txt", numbered(2001))
    out = ok(ws, "read", path="f.txt")
    body, hint = out.split("\n\n")
    assert body.split("\n")[-1] == "line2000"
    assert hint == "[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]"
    assert ok(ws, "read", path="f.txt", offset=2001) == "line2001"


def test_read_byte_limit_hint(ws: Workspace) -> None:
    put(ws, "f.txt", ("é" * 99 + "\n") * 300)
    out = ok(ws, "read", path="f.txt")
    body, hint = out.split("\n\n")
    assert len(body.encode()) <= MAX_BYTES
    assert body.split("\n") == ["é" * 99] * 257
    assert hint == "[Showing lines 1-257 of 300 (50.0 KB limit). Use offset=258 to continue.]"


def test_read_line_longer_than_limit_says_so(ws: Workspace) -> None:
    put(ws, "min.js", "€" * 20000 + "\nnext\n")
    out = ok(ws, "read", path="min.js")
    head, note = out.split("\n\n")
    assert head == "€" * 17066
    assert "Line 1 is 58.6 KB, over the 50.0 KB limit" in note
    assert "offset=2" in note
    assert ok(ws, "read", path="min.js", offset=2) == "next"


def test_read_offset_beyond_end(ws: Workspace) -> None:
    put(ws, "f.txt", numbered(120))
    assert fail(ws, "read", path="f.txt", offset=900) == (
        "offset 900 is beyond end of file (120 lines)"
    )


def test_read_empty_directory_binary_missing(ws: Workspace) -> None:
    put(ws, "empty.txt", "")
    assert ok(ws, "read", path="empty.txt") == "(empty file)"
    put(ws, "d/x", "x")
    assert "use ls" in fail(ws, "read", path="d")
    put(ws, "img.bin", b"\x89PNG\x00\x01\x02")
    assert "binary file (7 bytes)" in fail(ws, "read", path="img.bin")
    put(ws, "latin1.txt", "caf\xe9".encode("latin-1"))
    assert "not UTF-8" in fail(ws, "read", path="latin1.txt")
    assert fail(ws, "read", path="nope.txt").startswith("ENOENT")


# ---------------------------------------------------------------------------
# write


def test_write_creates_parents_and_overwrites(ws: Workspace) -> None:
    assert ok(ws, "write", path="a/b/c.txt", content="hello") == "Wrote 5 bytes to /work/a/b/c.txt"
    assert Path(ws.root, "a/b/c.txt").read_text() == "hello"
    assert ok(ws, "write", path="/work/a/b/c.txt", content="né") == (
        "Wrote 3 bytes to /work/a/b/c.txt"
    )
    assert Path(ws.root, "a/b/c.txt").read_text() == "né"
    assert os.listdir(Path(ws.root, "a/b")) == ["c.txt"]  # no temporary file left behind


def test_write_refuses_directory_and_file_parent(ws: Workspace) -> None:
    put(ws, "d/x", "x")
    assert "is a directory" in fail(ws, "write", path="d", content="x")
    assert "is a directory" in fail(ws, "write", path="/work", content="x")
    assert fail(ws, "write", path="d/x/y.txt", content="x").startswith("ENOTDIR")


# ---------------------------------------------------------------------------
# edit


def edit(ws: Workspace, path: str, *pairs: tuple[str, str]) -> ToolOutcome:
    edits = [{"oldText": old, "newText": new} for old, new in pairs]
    return call(ws, "edit", path=path, edits=edits)


def test_edit_applies_several_edits(ws: Workspace) -> None:
    f = put(ws, "x.py", "a = 1\nb = 2\nc = 3\n")
    out = edit(ws, "x.py", ("c = 3", "c = 30"), ("a = 1", "a = 10"))
    assert not out.is_error, out.output
    assert f.read_text() == "a = 10\nb = 2\nc = 30\n"
    assert out.output.startswith("Applied 2 edits to /work/x.py\n")
    assert "-a = 1\n+a = 10" in out.output


def test_edit_not_found_and_multiple_matches(ws: Workspace) -> None:
    put(ws, "x.txt", "foo\nfoo\nfoo\nbar\n")
    out = edit(ws, "x.txt", ("baz", "qux"))
    assert out.is_error
    assert out.output.startswith(
        "Could not find edits[0].oldText in /work/x.txt. It must match exactly, including "
    )
    out = edit(ws, "x.txt", ("bar", "BAR"), ("foo", "FOO"))
    assert out.is_error
    assert "edits[1].oldText matches 3 times in /work/x.txt" in out.output
    assert "add surrounding lines to make it unique" in out.output


def test_edit_counts_overlapping_occurrences(ws: Workspace) -> None:
    put(ws, "x.txt", "aaa")
    assert "matches 2 times" in edit(ws, "x.txt", ("aa", "b")).output


def test_edit_is_all_or_nothing(ws: Workspace) -> None:
    f = put(ws, "x.txt", "one\ntwo\n")
    out = edit(ws, "x.txt", ("one", "ONE"), ("three", "THREE"))
    assert out.is_error and "edits[1]" in out.output
    assert f.read_text() == "one\ntwo\n"


def test_edit_rejects_empty_overlapping_and_no_op(ws: Workspace) -> None:
    f = put(ws, "x.txt", "hello world\n")
    assert "edits[0].oldText is empty" in edit(ws, "x.txt", ("", "x")).output
    out = edit(ws, "x.txt", ("hello wo", "A"), ("world", "B"))
    assert out.is_error and "overlap" in out.output
    assert "No changes" in edit(ws, "x.txt", ("hello", "hello")).output
    assert f.read_text() == "hello world\n"


def test_edit_accepts_snake_case_and_crlf_files(ws: Workspace) -> None:
    f = put(ws, "w.txt", "a\r\nb\r\nc\r\n")
    out = call(ws, "edit", path="w.txt", edits=[{"old_text": "a\nb", "new_text": "A\nB"}])
    assert not out.is_error, out.output
    assert f.read_bytes() == b"A\r\nB\r\nc\r\n"


def test_edit_needs_at_least_one_edit(ws: Workspace) -> None:
    put(ws, "x.txt", "x")
    assert "edits" in fail(ws, "edit", path="x.txt", edits=[])
    assert "edits" in fail(ws, "edit", path="x.txt")


# ---------------------------------------------------------------------------
# ls


def test_ls_sorted_with_dirs_and_dotfiles(ws: Workspace) -> None:
    for name in ["b.txt", "A.md", ".hidden", "dir/inner.txt"]:
        put(ws, name, "x")
    assert ok(ws, "ls") == ".hidden\nA.md\nb.txt\ndir/"
    assert ok(ws, "ls", path="/work/dir") == "inner.txt"


def test_ls_empty_not_a_dir_missing_and_limit(ws: Workspace) -> None:
    Path(ws.root, "empty").mkdir()
    assert ok(ws, "ls", path="empty") == "(empty directory)"
    put(ws, "f.txt", "x")
    assert "/work/f.txt is not a directory" in fail(ws, "ls", path="f.txt")
    assert fail(ws, "ls", path="nope").startswith("ENOENT")
    for i in range(5):
        put(ws, f"many/{i}.txt", "x")
    out = ok(ws, "ls", path="many", limit=2)
    assert out == "0.txt\n1.txt\n\n[Showing 2 of 5 entries. Use limit=5.]"


# ---------------------------------------------------------------------------
# grep


@pytest.fixture
def tree(ws: Workspace) -> Workspace:
    put(ws, "src/a.py", "def foo():\n    return 1\n")
    put(ws, "src/b.py", "FOO = 2\n")
    put(ws, "src/deep/c.ts", "let foo = 3;\n")
    put(ws, "README.md", "foo bar\n")
    put(ws, ".git/config", "foo\n")
    put(ws, "node_modules/x.js", "foo\n")
    put(ws, "bin.dat", b"foo\x00\x01")
    return ws


def test_grep_regex_skips_binary_and_vendor_dirs(tree: Workspace) -> None:
    assert ok(tree, "grep", pattern="fo+") == (
        "README.md:1: foo bar\nsrc/a.py:1: def foo():\nsrc/deep/c.ts:1: let foo = 3;"
    )


def test_grep_ignore_case_literal_and_invalid_regex(tree: Workspace) -> None:
    out = ok(tree, "grep", pattern="foo", ignoreCase=True, path="src")
    assert out.splitlines() == [
        "src/a.py:1: def foo():",
        "src/b.py:1: FOO = 2",
        "src/deep/c.ts:1: let foo = 3;",
    ]
    assert ok(tree, "grep", pattern="foo(", literal=True) == "src/a.py:1: def foo():"
    err = fail(tree, "grep", pattern="foo(")
    assert "Invalid regex 'foo('" in err and "missing )" in err and "literal=true" in err


def test_grep_glob_by_name_or_path(tree: Workspace) -> None:
    assert ok(tree, "grep", pattern="foo", glob="*.ts") == "src/deep/c.ts:1: let foo = 3;"
    assert ok(tree, "grep", pattern="foo", glob="src/*.py") == "src/a.py:1: def foo():"
    assert ok(tree, "grep", pattern="foo", glob="*.{md,ts}").count("\n") == 1


def test_grep_context_merges_and_separates(ws: Workspace) -> None:
    put(ws, "f.txt", "".join(f"{'hit' if i in (2, 3, 9) else 'x'}{i}\n" for i in range(1, 12)))
    out = ok(ws, "grep", pattern="hit", context=1)
    assert out.splitlines() == [
        "f.txt-1- x1",
        "f.txt:2: hit2",
        "f.txt:3: hit3",
        "f.txt-4- x4",
        "--",
        "f.txt-8- x8",
        "f.txt:9: hit9",
        "f.txt-10- x10",
    ]


def test_grep_limit_and_no_match(ws: Workspace) -> None:
    put(ws, "f.txt", "m\n" * 5)
    out = ok(ws, "grep", pattern="m", limit=2)
    assert out == (
        "f.txt:1: m\nf.txt:2: m\n\n"
        "[2 matches limit reached. Use limit=4 for more, or refine the pattern.]"
    )
    assert "limit reached" not in ok(ws, "grep", pattern="m", limit=5)
    assert ok(ws, "grep", pattern="zzz") == "No matches found"


def test_grep_single_file_and_long_lines(ws: Workspace) -> None:
    put(ws, "long.txt", "needle" + "x" * 1000 + "\n")
    out = ok(ws, "grep", pattern="needle", path="/work/long.txt")
    line, note = out.split("\n\n")
    assert line.startswith("long.txt:1: needle") and len(line) < 600
    assert "cut at 500 characters" in note
    put(ws, "b.bin", b"\x00needle")
    assert "binary" in fail(ws, "grep", pattern="needle", path="b.bin")
    assert fail(ws, "grep", pattern="x", path="missing").startswith("ENOENT")


# ---------------------------------------------------------------------------
# find


def test_find_by_basename_and_path(tree: Workspace) -> None:
    assert ok(tree, "find", pattern="*.py") == "src/a.py\nsrc/b.py"
    assert ok(tree, "find", pattern="src/**/*.ts") == "src/deep/c.ts"
    assert ok(tree, "find", pattern="**/*.md") == "README.md"
    assert ok(tree, "find", pattern="*.{py,ts}", path="src/deep") == "src/deep/c.ts"
    assert ok(tree, "find", pattern="deep") == "src/deep/"
    assert ok(tree, "find", pattern="*.js") == "No files found matching '*.js' in /work"


def test_find_limit_and_not_a_directory(ws: Workspace) -> None:
    for i in range(4):
        put(ws, f"{i}.txt", "x")
    assert ok(ws, "find", pattern="*.txt", limit=2) == (
        "0.txt\n1.txt\n\n[2 results limit reached. Use limit=4 for more, or refine the pattern.]"
    )
    assert "not a directory" in fail(ws, "find", pattern="*", path="0.txt")


def test_compile_glob() -> None:
    match = compile_glob("src/**/*.py")
    assert match("src/a.py") and match("src/x/y/a.py") and not match("lib/a.py")
    assert compile_glob("*.py")("deep/dir/a.py")
    assert not compile_glob("src/*.py")("src/x/a.py")
    assert compile_glob("[!a]*.txt")("b.txt") and not compile_glob("[!a]*.txt")("a.txt")
    with pytest.raises(ToolError, match="is not closed"):
        compile_glob("*.{py,ts")


# ---------------------------------------------------------------------------
# jail and argument validation

OUTSIDE = ["../x", "/etc/passwd", "/work2/x"]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read", {}),
    ("write", {"content": "x"}),
    ("edit", {"edits": [{"oldText": "a", "newText": "b"}]}),
    ("ls", {}),
    ("grep", {"pattern": "x"}),
    ("find", {"pattern": "*"}),
]


@pytest.mark.parametrize("path", OUTSIDE)
@pytest.mark.parametrize(("name", "extra"), CALLS)
def test_paths_outside_the_workspace_are_refused(
    ws: Workspace, tmp_path: Path, name: str, extra: dict[str, Any], path: str
) -> None:
    out = fail(ws, name, path=path, **extra)
    assert out.startswith("EACCES")
    assert str(tmp_path) not in out and "root:" not in out
    assert not (tmp_path / "x").exists()


def test_symlink_out_of_the_workspace_is_not_followed(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("password\n")
    os.symlink(tmp_path / "secret.txt", Path(ws.root, "link.txt"))
    assert fail(ws, "read", path="link.txt").startswith("EACCES")
    assert ok(ws, "grep", pattern="password") == "No matches found"
    assert ok(ws, "find", pattern="*") == "No files found matching '*' in /work"


def test_invalid_arguments_are_error_results(ws: Workspace) -> None:
    out = fail(ws, "read", path=3)
    assert out.startswith("Invalid arguments for tool 'read'") and "- path:" in out
    assert "- content: Field required" in fail(ws, "write", path="a.txt")
    assert "- offset:" in fail(ws, "read", path="a.txt", offset=0)
    # Unknown fields are refused so a misspelt option is noticed, not silently ignored.
    assert "- ofset: Extra inputs are not permitted" in fail(ws, "read", path="a.txt", ofset=2)
