"""What an approval shows is the truth, and the answer is bound to it (issue 28, class 3):
the diff is against the file as it is (its removed lines too, however large), names
are quoted so that none can forge a line of the diff, and a target that changed while
the page decided is refused, with read before overwrite on or off."""

import asyncio
import json
import os

import pytest

from harness import diffs
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.tools.fileio import MAX_APPROVAL_DIFF, approval_diff


class Approver:
    """The page's onApproval: runs ``meanwhile`` (what the page does while its user
    decides) and then answers."""

    def __init__(self, answer="once", meanwhile=None):
        self.answer = answer
        self.meanwhile = meanwhile
        self.requests = []

    async def ask(self, request_json):
        self.requests.append(json.loads(request_json))
        await asyncio.sleep(0)
        if self.meanwhile is not None:
            self.meanwhile()
        return self.answer, None


def session(tmp_path, calls, approver, **options):
    turns = [{"toolCalls": [c]} for c in calls] + [{"text": "done"}]
    runtime = NativeRuntime(str(tmp_path / "ws"), approvals=approver)
    config = json.dumps({"model": {"api": "scripted", "turns": turns}, **options})
    return Session.from_options(config, runtime), runtime


def go(s):
    async def run():
        return await s.prompt("r1", "go")

    return asyncio.run(run())


def ends(rt):
    return [(m["name"], m["isError"], m["output"]) for m in rt.messages
            if m.get("type") == "tool_end"]


def write(path, content):
    return {"name": "write", "arguments": {"path": path, "content": content}}


def edit(path, old, new):
    return {"name": "edit", "arguments": {"path": path,
                                          "edits": [{"oldText": old, "newText": new}]}}


def read(path):
    return {"name": "read", "arguments": {"path": path}}


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


# -- the diff --------------------------------------------------------------------

def test_a_write_over_a_file_shows_the_lines_it_removes(tmp_path, ws):
    (ws / "a.txt").write_text("keep\nsecret key\nkeep too\n")
    approver = Approver("deny")
    s, _ = session(tmp_path, [write("a.txt", "keep\nkeep too\n")], approver,
                   permissions={"write": "ask"}, readBeforeWrite=False)
    go(s)
    diff = approver.requests[0]["diff"].split("\n")
    assert diff[:2] == ["--- /work/a.txt", "+++ /work/a.txt"]
    assert "-secret key" in diff and not any(line.startswith("+") for line in diff[2:])


@pytest.mark.parametrize("lines", [2_001, 30_000])
def test_a_file_too_large_to_align_still_shows_every_removed_line(lines):
    before = "".join(f"line {i}\n" for i in range(lines)).encode()
    after = "".join(f"line {i}\n" for i in range(lines) if i != lines // 2) + "new\n"
    out = approval_diff("/work/big.txt", before, after).split("\n")
    assert out[:2] == ["--- /work/big.txt", "+++ /work/big.txt"]  # not /dev/null
    assert f"-line {lines // 2}" in out
    if lines == 2_001:  # the changed middle still aligns: just the lines that changed
        assert "+new" in out and sum(line.startswith("-") for line in out[2:]) == 1
    else:  # 15,000 x 15,000 lines: unaligned, every old line removed, then cut
        assert out[-1].startswith("... (the diff is cut at 20,000 characters: in all it "
                                  "removes 15,000 lines and adds 15,000;")


def test_a_cut_diff_counts_the_removals_it_does_not_show():
    before = b"first\n" + b"".join(b"old %d\n" % i for i in range(50))
    after = "".join(f"added line {i:05} with some text\n" for i in range(2_000)) \
        + "first\n"  # the removals come after 20,000 characters of additions
    out = approval_diff("/work/a.txt", before, after)
    assert len(out) < MAX_APPROVAL_DIFF + 400
    last = out.split("\n")[-1]
    assert "in all it removes 50 lines and adds 2,000" in last
    assert "50 removed" in last and "-old 49" not in out


def test_one_huge_line_is_shown_in_part_and_marked():
    out = approval_diff("/work/min.js", None, "x" * 100_000 + "; rm -rf /\n")
    assert "[... this line is cut" in out and "not shown in full" in out
    assert len(out) < MAX_APPROVAL_DIFF + 400


def test_a_binary_file_replaced_by_text_says_so_and_shows_the_text():
    out = approval_diff("/work/a.bin", b"\x00\x01\x02" * 10, "hello\n")
    assert out.split("\n") == [
        "Binary file /work/a.bin (30 bytes, not shown) is replaced by this text:", "",
        "@@ -0,0 +1 @@", "+hello"]


HOSTILE = [
    "a\n+++ /work/b.txt\n@@ -0,0 +1 @@\n+ok",  # newlines forging the header and a hunk
    "a\r+++ b",  # a carriage return
    "invoice\u202efdp.txt",  # right-to-left override
    "a\u200b\u200d\u2060b.txt",  # zero width
    "a\u2028b\u2029c",  # line / paragraph separators
    "\x1b[2Ka.txt",  # a terminal escape
    'quote" and \\ backslash',
    "trailing.txt ",  # a space nobody sees
    "\ufeffbom.txt",
    "a\u0085b",  # NEL
]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_cannot_forge_a_line_or_hide_a_character(name):
    shown = f"/work/{name}"
    for before in (None, b"old\n"):
        lines = approval_diff(shown, before, "new\n").split("\n")
        # exactly the lines of one hunk, each marked, and every character visible
        assert [line[0] for line in lines] == ["-", "+", "@", *(["-"] if before else []), "+"]
        header = lines[1]
        assert header.startswith('+++ "/work/') and header.endswith('"')
        assert header.isascii() and header.isprintable()


def test_a_plain_name_is_shown_as_it_is():
    assert diffs.quote_name("/work/src/main.py") == "/work/src/main.py"
    assert diffs.quote_name("/work/my notes/é.md") == "/work/my notes/é.md"
    assert diffs.quote_name("/work/a\nb") == '"/work/a\\nb"'
    assert diffs.quote_name("/work/\u202e") == '"/work/\\u202e"'


def test_an_edit_shows_its_diff_against_the_file_as_it_is(tmp_path, ws):
    (ws / "a.txt").write_text("".join(f"{i}\n" for i in range(3_000)))
    approver = Approver("deny")
    s, _ = session(tmp_path, [edit("a.txt", "1500\n", "")], approver,
                   permissions={"edit": "ask"}, readBeforeWrite=False)
    go(s)
    lines = approver.requests[0]["diff"].split("\n")
    assert "-1500" in lines and not any(x.startswith("+") for x in lines[2:])


# -- the answer is bound to what was shown ---------------------------------------------

def _change(path, content):
    return lambda: path.write_text(content)


@pytest.mark.parametrize("read_before_write", [False, True])
@pytest.mark.parametrize("what", ["changed", "deleted", "created", "renamed in", "directory"])
def test_a_write_whose_target_changed_while_waiting_is_refused(tmp_path, ws, what,
                                                               read_before_write):
    target = ws / "a.txt"
    if what != "created":
        target.write_text("shown\n")

    def meanwhile():
        if what == "changed":
            target.write_text("changed by the page\n")
        elif what == "deleted":
            target.unlink()
        elif what == "created":
            target.write_text("created meanwhile\n")
        elif what == "renamed in":
            (ws / "other.txt").write_text("another file\n")
            os.replace(ws / "other.txt", target)
        else:
            target.unlink()
            target.mkdir()

    calls = [] if what == "created" else [read("a.txt")]
    s, rt = session(tmp_path, [*calls, write("a.txt", "the model's\n")],
                    Approver("once", meanwhile), permissions={"write": "ask"},
                    readBeforeWrite=read_before_write)
    go(s)
    name, is_error, output = ends(rt)[-1]
    assert name == "write" and is_error
    assert "a.txt changed while the user was deciding on it" in output
    assert "Read it again" in output
    if what != "deleted":
        assert target.exists() and (target.is_dir() or "the model's" not in target.read_text())
    else:
        assert not target.exists()


def test_an_unchanged_target_is_written_and_always_still_binds_this_call(tmp_path, ws):
    (ws / "a.txt").write_text("one\n")
    s, rt = session(tmp_path, [write("a.txt", "two\n")], Approver("always"),
                    permissions={"write": "ask"}, readBeforeWrite=False)
    go(s)
    assert not ends(rt)[0][1] and (ws / "a.txt").read_text() == "two\n"
    s, rt = session(tmp_path, [write("a.txt", "three\n")],
                    Approver("always", _change(ws / "a.txt", "page\n")),
                    permissions={"write": "ask"}, readBeforeWrite=False)
    go(s)
    assert ends(rt)[0][1] and (ws / "a.txt").read_text() == "page\n"


@pytest.mark.parametrize("read_before_write", [False, True])
def test_an_edit_whose_file_changed_while_waiting_is_refused(tmp_path, ws, read_before_write):
    (ws / "a.txt").write_text("alpha\nbeta\n")
    # the page changes a line the edit does not touch: the edit would still apply
    s, rt = session(tmp_path, [read("a.txt"), edit("a.txt", "alpha", "ALPHA")],
                    Approver("once", _change(ws / "a.txt", "alpha\nbeta\nrm -rf /\n")),
                    permissions={"edit": "ask"}, readBeforeWrite=read_before_write)
    go(s)
    name, is_error, output = ends(rt)[-1]
    assert name == "edit" and is_error and "changed while the user was deciding" in output
    assert (ws / "a.txt").read_text() == "alpha\nbeta\nrm -rf /\n"


def test_an_edit_that_could_not_apply_when_asked_cannot_apply_after(tmp_path, ws):
    (ws / "a.txt").write_text("nothing here\n")
    s, rt = session(tmp_path, [edit("a.txt", "TOKEN", "x")],
                    Approver("once", _change(ws / "a.txt", "TOKEN\n")),
                    permissions={"edit": "ask"}, readBeforeWrite=False)
    go(s)
    assert ends(rt)[0][1] and (ws / "a.txt").read_text() == "TOKEN\n"


def test_a_symlink_pointed_elsewhere_while_waiting_is_refused(tmp_path, ws):
    (ws / "one.txt").write_text("same\n")
    (ws / "two.txt").write_text("same\n")
    (ws / "link.txt").symlink_to("one.txt")

    def retarget():
        (ws / "link.txt").unlink()
        (ws / "link.txt").symlink_to("two.txt")

    s, rt = session(tmp_path, [write("link.txt", "x\n")], Approver("once", retarget),
                    permissions={"write": "ask"}, readBeforeWrite=False)
    go(s)
    assert ends(rt)[0][1]
    assert (ws / "one.txt").read_text() == (ws / "two.txt").read_text() == "same\n"


def test_the_re_check_and_the_write_have_no_await_between_them():
    """The binding holds only if nothing can run between the second look and the
    write: the tool set calls the tool straight after the gate, and write/edit run
    without awaiting anything."""
    import dis

    from harness.tools import fileio

    suspending = {"GET_AWAITABLE", "GET_ANEXT", "BEFORE_ASYNC_WITH"}
    for cls in (fileio.WriteTool, fileio.EditTool):  # by bytecode: also from a .pyc
        ops = {i.opname for i in dis.get_instructions(cls.run)}
        assert not ops & suspending, cls
