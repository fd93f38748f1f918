"""Checkpoints and undo in real Chromium: a run that changed files every way (built-in
tools, a shell command, python3) is diffed, dry-run, reverted to exactly the tree before
it, and redone; a later change is a conflict that reverts nothing, a cascade takes the
later runs back first; a stored workspace keeps its checkpoints for the next harness.
Page side: e2e/pages/rows/checkpoints.mjs; the property tests are tests/test_checkpoints.py."""

from __future__ import annotations

import json
from typing import Any

import pytest

from e2e.conftest import call


def test_a_run_is_reverted_exactly_and_redone(app: Any) -> None:
    r = call(app, "checkpoints.revertEveryKind")
    assert r["after"] != r["before"]
    assert "keep.txt" not in r["after"] and "src/b.py" in r["after"] and "out/empty/" in r["after"]
    diff = {d["path"]: d for d in r["diff"]}
    assert diff["/work/keep.txt"]["kind"] == "deleted"
    assert diff["/work/notes/new.md"]["kind"] == "created"
    assert diff["/work/data.bin"]["kind"] == "modified" and diff["/work/data.bin"]["diff"] is None
    assert diff["/work/src/a.py"]["kind"] == "deleted"  # edited, then moved to b.py
    assert "+print('edited')" in diff["/work/src/b.py"]["diff"]
    # a dry run says what would change and changes nothing
    assert r["afterDry"] == r["after"] and r["dry"]["revertId"] is None
    assert {c["path"] for c in r["dry"]["changes"]} == {c["path"] for c in r["reverted"]["changes"]}
    # reverted: exactly the tree before the run (contents, modes, the empty folder gone)
    assert r["back"] == r["before"]
    assert r["reverted"]["reverted"] == [r["runId"]]
    assert r["again"]["ok"] is False and r["again"]["code"] == "EINVAL"
    # the revert's changes reached the page as file_change events of their own cause
    assert r["heard"] and all(e["tool"] == "revert" and e["runId"] is None for e in r["heard"])
    assert {e["callId"] for e in r["heard"]} == {r["reverted"]["revertId"], r["redone"]["revertId"]}
    undo = {(e["path"], e["kind"]) for e in r["heard"] if e["callId"] == r["reverted"]["revertId"]}
    redo = {(e["path"], e["kind"]) for e in r["heard"] if e["callId"] == r["redone"]["revertId"]}
    assert ("/work/keep.txt", "created") in undo and ("/work/keep.txt", "deleted") in redo
    # the revert reverted: the run's changes are back
    assert r["redoneTree"] == r["after"]
    by_run = {c["runId"]: c for c in r["listing"]}
    assert by_run[r["runId"]]["revertedBy"] is None


def test_a_later_change_is_a_conflict_and_cascade_takes_later_runs_back(app: Any) -> None:
    r = call(app, "checkpoints.conflictAndCascade")
    first, second, _third = r["ids"]
    assert r["conflict"]["ok"] is False and r["conflict"]["code"] == "ECONFLICT"
    assert "/work/a.txt" in r["conflict"]["message"] and "cascade" in r["conflict"]["message"]
    # the page's own change cannot be cascaded away
    assert r["pageConflict"]["code"] == "ECONFLICT" and "/work/b.txt" in r["pageConflict"]["message"]
    assert r["untouched"] == "second\n"  # nothing was half-reverted
    assert r["cascade"]["reverted"] == [second, first]
    assert r["aExists"] is False and r["b"] == "the user's own edit\n"


def test_checkpoints_survive_a_reopen(app: Any) -> None:
    r = call(app, "checkpoints.revertAfterReopen", "checkpoints-reopen")
    assert r["storage"] == "opfs"
    assert r["runId"] in r["listed"] and r["reverted"] == [r["runId"]]
    assert r["kept"] == "the page's\n" and r["gone"] == "deleted by the run\n"


def test_rewind_restores_the_files_and_cuts_the_next_request(app: Any, provider: Any) -> None:
    provider.script([
        {"toolCalls": [["write", {"path": "a.txt", "content": "one\n"}]]}, {"text": "1"},
        {"toolCalls": [["write", {"path": "a.txt", "content": "two\n"}],
                       ["write", {"path": "b.txt", "content": "b\n"}]]}, {"text": "2"},
        {"text": "3, after the rewind"},
    ])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "apiKey": "sk-test",
             "model": "gpt-test"}
    r = call(app, "checkpoints.rewindCutsTheThread", model)
    assert r["before"] == {"a": "two\n", "b": True}
    assert r["after"] == {"a": "one\n", "b": False}  # the second run's files, taken back
    assert r["rewound"]["rewound"] == [r["secondId"]] and r["rewound"]["removedMessages"] > 0
    assert r["transcript"] == ["first prompt"]
    assert r["third"] == "3, after the rewind"
    last = [q for q in provider.requests if q.method == "POST"][-1]
    said = json.dumps(last.body["messages"])
    assert "first prompt" in said and "third prompt" in said
    assert "second prompt" not in said and "b.txt" not in said  # the rewound turns are gone
    assert r["again"]["ok"] is False and r["again"]["code"] == "ENOENT"


# -- undo never takes back what the run did not do (issue 28, class 5) -------------------


def test_the_pages_edits_during_a_run_are_a_conflict_and_stay(app: Any) -> None:
    r = call(app, "checkpoints.pageEditsDuringARun")
    for refused in r["refused"]:  # plain, cascade, dry run: all refused
        assert refused["ok"] is False and refused["code"] == "ECONFLICT", refused
        for path in ("/work/notes.txt", "/work/out/mine.txt", "/work/old.txt"):
            assert path in refused["message"]
        assert "/work/other.txt" not in refused["message"]  # only the run's: no conflict
    assert r["unchanged"] == r["after"]  # nothing was reverted
    assert r["texts"] == {"notes": "the user's edit\n",
                          "mine": "the user's file in the run's folder\n",
                          "old": "the user brought it back\n"}
    assert r["changedSince"]["/work/notes.txt"] is True
    assert r["changedSince"]["/work/other.txt"] is False
    # {force: true} reverts anyway, and reverting that revert gives the user's edit back
    assert r["forced"] == {"ok": True, "notes": "before the run\n", "back": True,
                           "backNotes": "the user's edit\n"}


def test_the_pages_edit_before_the_run_touched_a_file_is_what_comes_back(app: Any) -> None:
    r = call(app, "checkpoints.pageEditsBeforeTheRunTouches")
    assert r["reverted"]["ok"], r["reverted"]
    assert r["pre"] == "the user's, before the run wrote\n"
    assert r["aside"] == "the user's aside\n"


def test_the_pages_edit_after_the_run_is_a_conflict_even_after_a_reopen(app: Any) -> None:
    call(app, "persistence.deleteAllWorkspaces")
    r = call(app, "checkpoints.pageEditAfterTheRun", "undo-after")
    for key in ("edited", "same", "reopened"):
        assert r[key]["ok"] is False and r[key]["code"] == "ECONFLICT", (key, r[key])
        assert "/work/a.txt" in r[key]["message"]
    assert r["a"] == "by the run\n" and r["treesEqual"]


def _revert_after_reopen(app: Any, name: str, reload: bool) -> None:
    call(app, "persistence.deleteAllWorkspaces")
    first = call(app, "checkpoints.aCreatingRunInAStoredWorkspace", name, not reload)
    assert first["storage"] == "opfs" and first["after"] != first["before"]
    assert "new.txt" in first["after"] and "made/deep/f.txt" in first["after"]
    assert "gone.txt" not in first["after"]
    if reload:
        app.reload()
        app.wait_for_function("window.pyharness !== undefined")
    r = call(app, "checkpoints.revertInANewHarness", name, first["runId"])
    assert r["reopened"] == first["after"]  # contents and modes, exactly
    assert first["runId"] in r["listed"]
    assert r["reverted"]["ok"], r["reverted"]
    assert r["back"] == first["before"]  # exactly the tree before the run, modes too
    assert r["redo"]["ok"] and r["redone"] == first["after"]


def test_a_creating_run_is_reverted_after_a_page_reload(app: Any) -> None:
    _revert_after_reopen(app, "undo-reload", reload=True)


def test_a_creating_run_is_reverted_by_a_new_harness_over_the_workspace(app: Any) -> None:
    _revert_after_reopen(app, "undo-reopen", reload=False)


@pytest.mark.parametrize("seed", [28, 5])
def test_a_random_story_in_a_stored_workspace_never_loses_the_pages_edits(app: Any,
                                                                          seed: int) -> None:
    """In-browser, over the real OPFS store (fixed seeds, 14 steps each): runs with the
    page editing while they wait, page edits, reverts, reopens; every revert either
    changes nothing (refused) or touches no path the page had the last word on, and a
    run reverted right after it is undone exactly. (The larger random search is
    tests/test_checkpoints.py's property, on CPython.)"""
    call(app, "persistence.deleteAllWorkspaces")
    r = call(app, "checkpoints.randomStory", f"story-{seed}", seed, 14)
    print(f"random story {seed}: {r['counts']}")
    assert r["violations"] == []
    assert r["counts"]["runs"] > 0 and r["counts"]["reverted"] + r["counts"]["refused"] > 0
