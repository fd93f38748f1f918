"""A persistent workspace in real Chromium (OPFS): what was written survives a reload, a
close() and a killed worker; one writer per workspace; memory when asked. The page side of
each row is an export of e2e/pages/rows/persistence.mjs."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.conftest import call


@pytest.fixture
def fresh(app: Any) -> Any:
    """The app page with this origin's stored workspaces removed first."""
    call(app, "persistence.deleteAllWorkspaces")
    return app


def boot_and_list(page: Any, workspace: str = "w1") -> Any:
    return call(page, "persistence.bootAndList", workspace)


def test_files_survive_a_reload(fresh: Any) -> None:
    call(fresh, "persistence.writeEveryWayAndLeaveOpen")
    fresh.reload()
    fresh.wait_for_function("window.pyharness !== undefined")
    r = boot_and_list(fresh)
    assert r["storage"]["kind"] == "opfs" and r["storage"]["workspace"] == "w1"
    assert r["files"] == {
        "/work/log.txt": "one\ntwo\n", "/work/moved": "dir", "/work/moved/b": "dir",
        "/work/moved/b/f.txt": "deep", "/work/page.txt": "by the page", "/work/src": "dir",
        "/work/src/tool.txt": "by the edit tool", "/work/weird\\name%.txt": "escaped",
        "/work/shrink.txt": "abcde"}
    assert r["storage"]["restoredFiles"] == 6


def test_a_killed_worker_loses_nothing_after_tool_end(fresh: Any) -> None:
    r = call(fresh, "persistence.killWorkerAfterTheToolEnds")
    assert r == {"first": "1", "py": "from the sandbox"}


def test_close_then_a_new_harness_and_an_fs_reply_is_durable(fresh: Any) -> None:
    r = call(fresh, "persistence.killWorkerAfterAnFsReply")
    assert r == {"size": 1024 * 1024, "sevens": True}


def test_one_writer_per_workspace(fresh: Any, server: Any) -> None:
    second = fresh.context.new_page()
    second.goto(f"{server.url}/index.html")
    second.wait_for_function("window.pyharness !== undefined")
    call(fresh, "persistence.hold", "shared")
    r = call(second, "persistence.bootBesideTheHolder")
    assert r["code"] == "EBOOT" and "open in another tab" in r["message"]
    listed = call(fresh, "persistence.deleteTheHeldWorkspace")
    second.close()
    assert {"name": "shared", "open": True} in listed["list"]
    assert not listed["refused"]["ok"] and "is open" in listed["refused"]["message"]
    assert listed["deleted"]["ok"]
    assert "shared" not in [w["name"] for w in listed["after"]]


def test_memory_storage_keeps_nothing(fresh: Any) -> None:
    r = call(fresh, "persistence.memoryStorageKeepsNothing")
    assert r["storage"]["kind"] == "memory" and r["listing"] == []


def test_a_conversation_resumes_after_a_reload(fresh: Any, provider: Any) -> None:
    provider.script([
        {"text": "noted", "toolCalls": [["write", {"path": "n.txt", "content": "42"}]]},
        {"text": "I wrote n.txt"},
        {"text": "it was 42"}])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "model": "m"}
    call(fresh, "persistence.startAConversation", model)
    fresh.reload()
    fresh.wait_for_function("window.pyharness !== undefined")
    r = call(fresh, "persistence.resumeTheConversation", model)
    assert [t["title"] for t in r["list"]["threads"]] == ["Numbers"]
    assert r["list"]["threads"][0]["messages"] == 4  # user, assistant + call, tool, assistant
    types = [e["type"] for e in r["transcript"]["events"]]
    assert types[0] == "run_start" and types[-1] == "run_end" and "tool_end" in types
    assert r["transcript"]["events"][0]["prompt"] == "remember 42"
    assert r["done"]["text"] == "it was 42"
    last = [q for q in provider.requests if q.method == "POST"][-1].body["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert last[1]["content"] == "remember 42"
    assert r["other"]["title"] == "Other" and len(r["after"]["threads"]) == 2


def test_a_run_cut_off_by_a_killed_worker_is_shown_as_interrupted(fresh: Any) -> None:
    r = call(fresh, "persistence.cutARunOffAndRepair")
    assert r["events"][-1] == ["run_end", "aborted", True]
    done = r["done"]
    assert (done["text"], done["stopReason"], done["usage"]["requests"]) == (
        "after the repair", "stop", 1)


def test_export_and_import_a_workspace_as_a_zip(fresh: Any) -> None:
    r = call(fresh, "persistence.exportAndImportAZip")
    assert r["size"] > 100 and r["counts"] == {"files": 2, "dirs": 2}
    assert r["listing"] == ["notes.md", "src"] and r["a"] == "print('a')\n"
    assert r["bad"]["code"] == "EINVAL"
    assert r["slip"]["code"] == "EACCES" and r["after"] == ["notes.md", "src"]


def test_memory_when_opfs_is_unavailable(browser_type: Any, browser_type_launch_args: Any,
                                         server: Any) -> None:
    """A page on plain http under a real host name is not a secure context: no OPFS (nor
    Web Locks). "auto" keeps the files in memory and says why; "opfs" is refused."""
    port = server.url.rsplit(":", 1)[1]
    args = [*browser_type_launch_args["args"], "--host-resolver-rules=MAP pyharness.test 127.0.0.1"]
    browser = browser_type.launch(**{**browser_type_launch_args, "args": args})
    try:
        page = browser.new_page()
        page.goto(f"http://pyharness.test:{port}/index.html")
        page.wait_for_function("window.pyharness !== undefined")
        r = call(page, "persistence.withoutOpfs")
    finally:
        browser.close()
    assert r["secure"] is False
    assert r["storage"]["kind"] == "memory" and r["storage"]["workspace"] == "w"
    assert "OPFS is not available" in r["storage"]["reason"]
    assert "secure context" in r["storage"]["reason"]
    assert r["result"] == "stop" and r["files"] == ["p.txt", "t.txt"]
    assert r["refused"]["code"] == "EBOOT" and "OPFS is not available" in r["refused"]["message"]
    assert r["listed"] == []


def test_a_full_storage_is_reported_and_nothing_is_lost(fresh: Any) -> None:
    """The site's storage quota is cut under a running harness (DevTools protocol): a
    call that changes files rejects with ENOSPC and h.storage.error says so, the session
    keeps every change, runs go on, and once there is room again the next save writes
    what was queued."""
    cdp = fresh.context.new_cdp_session(fresh)
    origin = fresh.evaluate("location.origin")
    call(fresh, "persistence.holdFull")
    usage = fresh.evaluate("navigator.storage.estimate().then((e) => e.usage)")
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": usage + 64 * 1024})
    r = call(fresh, "persistence.writePastTheQuota")
    assert r["big"]["code"] == "ENOSPC" and "could not be saved" in r["big"]["message"]
    assert r["error"]["code"] == "ENOSPC" and "full" in r["error"]["message"]
    assert r["kept"] == 1024 * 1024 and r["tool"] == 300000
    assert r["run"]["stopReason"] == "stop"

    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin})  # room again
    r = call(fresh, "persistence.saveWithRoomAgain")
    assert r["error"] is None
    assert r["names"] == ["after.txt", "big.bin", "by-tool.txt", "small.txt"] and r["big"] == 1024 * 1024


def test_a_workspace_of_the_previous_format_opens_with_every_file(fresh: Any) -> None:
    r = call(fresh, "persistence.openThePreviousFormat")
    assert r["files"] == {"/work/a.txt": "alpha", "/work/empty": "dir",
                          "/work/odd\\name%.txt": "escaped", "/work/src": "dir",
                          "/work/src/deep": "dir", "/work/src/deep/b.py": "print('b')"}
    assert r["restored"] == 3
    # Stored as a snapshot and its log now; the old folders are gone.
    assert r["stored"] == ["log.1", "snap.1"]
    assert r["again"] == {**r["files"], "/work/after.txt": "written after the move"}


def test_a_torn_log_tail_is_dropped_and_nothing_else(fresh: Any) -> None:
    r = call(fresh, "persistence.openWithATornLogTail")
    assert r["after"] == {"/work/also.txt": "also", "/work/kept.txt": "kept",
                          "/work/later.txt": "later"}


def test_a_workspace_of_thousands_of_files_reopens(fresh: Any) -> None:
    """Imported, seen whole by a command, closed, reopened whole from one snapshot and one
    log. 2,000 files (was 10,000): e2e/test_reopen_scale.py reopens 10,000 three times (seven
    in make fuzz) and checks each count, and the bench's shell steps run commands over 10,000."""
    import base64
    import io
    import zipfile

    count = 2_000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # 10 folders of 200 small files
        for i in range(count):
            z.writestr(f"d{i % 10}/f{i}.txt", f"file {i}\n")
    r = call(fresh, "persistence.reopenAWorkspaceOf", base64.b64encode(buf.getvalue()).decode(),
             count)
    assert r["command"] == [str(count // 10)]  # the sandbox got all of it
    assert r["big"]["restored"] == count + 1 and r["big"]["top"] == 11  # and made.txt
    assert r["big"]["sample"] == f"file {count - 1}\n"
    assert r["stored"] == ["log.1", "snap.1"] or r["stored"] == ["log.2", "snap.2"]
    print(f"reopen: empty {r['empty']['ms']:.0f} ms, {count} files {r['big']['ms']:.0f} ms "
          f"(ratio {r['big']['ms'] / r['empty']['ms']:.2f})")
