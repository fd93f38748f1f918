"""A persistent workspace in real Chromium (OPFS): what was written survives a reload, a
close() and a killed worker; one writer per workspace; memory when asked."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture
def fresh(app: Any) -> Any:
    """The app page with this origin's stored workspaces removed first."""
    app.evaluate("""async () => {
      for (const w of await pyharness.listWorkspaces()) await pyharness.deleteWorkspace(w.name);
    }""")
    return app


def boot_and_list(page: Any, workspace: str = "w1") -> Any:
    return page.evaluate("""async (workspace) => {
      const h = await boot({workspace});
      const walk = async (dir) => {
        const out = {};
        for (const e of await h.fs.readdir(dir)) {
          const path = `${dir}/${e.name}`;
          out[path] = e.type === "dir" ? "dir" : await h.fs.readFile(path, "utf8");
          if (e.type === "dir") Object.assign(out, await walk(path));
        }
        return out;
      };
      const files = await walk("/work");
      const storage = h.storage;
      h.close();
      return {files, storage};
    }""", workspace)


def test_files_survive_a_reload(fresh: Any) -> None:
    fresh.evaluate("""async () => {
      const h = await boot({workspace: "w1", model: {api: "scripted", turns: [
        {toolCalls: [{name: "write", arguments: {path: "src/tool.txt", content: "by the tool"}},
                     {name: "edit", arguments: {path: "src/tool.txt", edits: [{oldText: "tool", newText: "edit tool"}]}}]},
        {text: "done"}]}});
      await h.fs.writeFile("page.txt", "by the page");
      await h.fs.writeFile("log.txt", "one\\n");
      await h.fs.writeFile("log.txt", "two\\n", {append: true});
      await h.fs.mkdir("a/b", {recursive: true});
      await h.fs.writeFile("a/b/f.txt", "deep");
      await h.fs.rename("a", "moved");
      await h.fs.writeFile("gone.txt", "x");
      await h.fs.rm("gone.txt");
      await h.fs.writeFile("weird\\\\name%.txt", "escaped");
      await h.fs.writeFile("shrink.txt", "0123456789");
      await h.fs.writeFile("shrink.txt", "abc");  // shorter: the old tail must go
      await h.fs.writeFile("shrink.txt", "de", {append: true});  // only the new bytes go out
      await h.prompt("write").done;
      // no close(): the page is reloaded under it
    }""")
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
    r = fresh.evaluate("""async () => {
      const h = await boot({workspace: "w2", shell: true, model: {api: "scripted", turns: [
        {toolCalls: [{name: "write", arguments: {path: "first.txt", content: "1"}},
                     {name: "bash", arguments: {command: "python3 -c \\"open('py.txt', 'w').write('from the sandbox')\\""}}]},
        {text: "done"}]}});
      let ends = 0;
      await new Promise((resolve) => {
        h.subscribe((e) => {
          if (e.type === "tool_end" && ++ends === 2) {
            h._worker.terminate();  // killed right after the event reached the page
            resolve();
          }
        });
        h.prompt("go");
      });
      h.close();
      const again = await boot({workspace: "w2"});
      const out = {first: await again.fs.readFile("first.txt", "utf8"), py: await again.fs.readFile("py.txt", "utf8")};
      again.close();
      return out;
    }""")
    assert r == {"first": "1", "py": "from the sandbox"}


def test_close_then_a_new_harness_and_an_fs_reply_is_durable(fresh: Any) -> None:
    r = fresh.evaluate("""async () => {
      const h = await boot({workspace: "w3"});
      await h.fs.writeFile("big.bin", new Uint8Array(1024 * 1024).fill(7));
      h._worker.terminate();  // right after the reply: it was on disk before it was sent
      h.close();
      const again = await boot({workspace: "w3"});
      const bytes = await again.fs.readFile("big.bin");
      again.close();
      return {size: bytes.length, sevens: bytes.every((b) => b === 7)};
    }""")
    assert r == {"size": 1024 * 1024, "sevens": True}


def test_one_writer_per_workspace(fresh: Any, server: Any) -> None:
    second = fresh.context.new_page()
    second.goto(f"{server.url}/index.html")
    second.wait_for_function("window.pyharness !== undefined")
    fresh.evaluate("""async () => { window.h = await boot({workspace: "shared"}); }""")
    r = second.evaluate("""async () => {
      const other = await settle(boot({workspace: "shared"}));
      const elsewhere = await boot({workspace: "another"});
      elsewhere.close();
      return other;
    }""")
    assert r["code"] == "EBOOT" and "open in another tab" in r["message"]
    listed = fresh.evaluate("""async () => {
      const list = await h.workspaces.list();
      const refused = await settle(h.workspaces.delete("shared"));
      h.close();
      await new Promise((r) => setTimeout(r, 100));
      const deleted = await settle(h.workspaces.delete("shared"));
      return {list, refused, deleted, after: await pyharness.listWorkspaces()};
    }""")
    second.close()
    assert {"name": "shared", "open": True} in listed["list"]
    assert not listed["refused"]["ok"] and "is open" in listed["refused"]["message"]
    assert listed["deleted"]["ok"]
    assert "shared" not in [w["name"] for w in listed["after"]]


def test_memory_storage_keeps_nothing(fresh: Any) -> None:
    r = fresh.evaluate("""async () => {
      const h = await boot({workspace: "m", storage: "memory"});
      await h.fs.writeFile("x.txt", "x");
      const storage = h.storage;
      h.close();
      const again = await boot({workspace: "m", storage: "memory"});
      const listing = await again.fs.readdir("/work");
      again.close();
      return {storage, listing};
    }""")
    assert r["storage"]["kind"] == "memory" and r["listing"] == []


def test_a_conversation_resumes_after_a_reload(fresh: Any, provider: Any) -> None:
    provider.script([
        {"text": "noted", "toolCalls": [["write", {"path": "n.txt", "content": "42"}]]},
        {"text": "I wrote n.txt"},
        {"text": "it was 42"}])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "model": "m"}
    fresh.evaluate("""async (model) => {
      const h = await boot({workspace: "chat", model});
      await h.threads.rename((await h.threads.list()).current, "Numbers");
      await h.prompt("remember 42").done;
    }""", model)
    fresh.reload()
    fresh.wait_for_function("window.pyharness !== undefined")
    r = fresh.evaluate("""async (model) => {
      const h = await boot({workspace: "chat", model});
      const list = await h.threads.list();
      const transcript = await h.threads.transcript();
      const done = await h.prompt("what was it?").done;
      const other = await h.threads.create("Other");
      const after = await h.threads.list();
      await h.threads.switch(list.current);
      h.close();
      return {list, transcript, done, other, after};
    }""", model)
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
    r = fresh.evaluate("""async () => {
      const turns = [{toolCalls: [{name: "write", arguments: {path: "a.txt", content: "a"}},
                                  {name: "ls", arguments: {}}]},
                     {text: "never finished", delayMs: 5000}, {text: "after the repair"}];
      const h = await boot({workspace: "cut", model: {api: "scripted", turns}});
      await new Promise((resolve) => {
        h.subscribe((e) => { if (e.type === "tool_end" && e.name === "write") { h._worker.terminate(); resolve(); } });
        h.prompt("start");
      });
      h.close();
      const again = await boot({workspace: "cut", model: {api: "scripted", turns: [{text: "after the repair"}]}});
      const transcript = await again.threads.transcript();
      const done = await again.prompt("go on").done;
      again.close();
      return {events: transcript.events.map((e) => [e.type, e.stopReason ?? null, e.interrupted ?? null]), done};
    }""")
    assert r["events"][-1] == ["run_end", "aborted", True]
    assert r["done"] == {"text": "after the repair", "stopReason": "stop"}


def test_export_and_import_a_workspace_as_a_zip(fresh: Any) -> None:
    r = fresh.evaluate("""async () => {
      const h = await boot({workspace: "zip-a"});
      await h.fs.mkdir("src/deep", {recursive: true});
      await h.fs.writeFile("src/deep/a.py", "print('a')\\n");
      await h.fs.writeFile("notes.md", "# notes\\n");
      const zip = await h.fs.exportZip();
      h.close();
      const b = await boot({workspace: "zip-b"});
      await b.fs.writeFile("old.txt", "goes away");
      const counts = await b.fs.importZip(zip, {replace: true});
      const listing = (await b.fs.readdir("/work")).map((e) => e.name);
      const a = await b.fs.readFile("src/deep/a.py", "utf8");
      const bad = await settle(b.fs.importZip(new TextEncoder().encode("not a zip")));
      // a "zip slip": a hand-made archive whose one entry is ../escape.txt
      const name = new TextEncoder().encode("../escape.txt");
      const header = new Uint8Array(30 + name.length);
      const v = new DataView(header.buffer);
      v.setUint32(0, 0x04034b50, true); v.setUint16(26, name.length, true); header.set(name, 30);
      const central = new Uint8Array(46 + name.length);
      const c = new DataView(central.buffer);
      c.setUint32(0, 0x02014b50, true); c.setUint16(28, name.length, true); central.set(name, 46);
      const end = new Uint8Array(22);
      const e = new DataView(end.buffer);
      e.setUint32(0, 0x06054b50, true); e.setUint16(8, 1, true); e.setUint16(10, 1, true);
      e.setUint32(12, central.length, true); e.setUint32(16, header.length, true);
      const slip = await settle(b.fs.importZip(new Uint8Array([...header, ...central, ...end])));
      const after = (await b.fs.readdir("/work")).map((e) => e.name);
      b.close();
      return {size: zip.length, counts, listing, a, bad, slip, after};
    }""")
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
        r = page.evaluate("""async () => {
          const h = await boot({workspace: "w", model: {api: "scripted", turns: [
            {toolCalls: [{name: "write", arguments: {path: "t.txt", content: "tool"}}]}, {text: "ok"}]}});
          await h.fs.writeFile("p.txt", "page");
          const result = await h.prompt("write").done;
          const files = (await h.fs.readdir("/work")).map((e) => e.name);
          const storage = h.storage;
          h.close();
          const refused = await settle(boot({workspace: "w", storage: "opfs"}));
          return {secure: isSecureContext, storage, result: result.stopReason, files, refused,
                  listed: await pyharness.listWorkspaces()};
        }""")
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
    fresh.evaluate("""async () => {
      window.h = await boot({workspace: "full", model: {api: "scripted", turns: [
        {toolCalls: [{name: "write", arguments: {path: "by-tool.txt", content: "t".repeat(300000)}}]},
        {text: "written"}]}});
      await h.fs.writeFile("small.txt", "fits");
    }""")
    usage = fresh.evaluate("navigator.storage.estimate().then((e) => e.usage)")
    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": usage + 64 * 1024})
    r = fresh.evaluate("""async () => {
      const big = await settle(h.fs.writeFile("big.bin", new Uint8Array(1024 * 1024).fill(5)));
      const error = h.storage.error;
      const kept = (await h.fs.readFile("big.bin")).length;  // the session has it
      const run = await h.prompt("write more").done;
      return {big, error, kept, run, tool: (await h.fs.stat("by-tool.txt")).size};
    }""")
    assert r["big"]["code"] == "ENOSPC" and "could not be saved" in r["big"]["message"]
    assert r["error"]["code"] == "ENOSPC" and "full" in r["error"]["message"]
    assert r["kept"] == 1024 * 1024 and r["tool"] == 300000
    assert r["run"]["stopReason"] == "stop"

    cdp.send("Storage.overrideQuotaForOrigin", {"origin": origin})  # room again
    r = fresh.evaluate("""async () => {
      await h.fs.writeFile("after.txt", "saved");
      const error = h.storage.error ?? null;
      h.close();
      await new Promise((r) => setTimeout(r, 100));
      const again = await boot({workspace: "full"});
      const names = (await again.fs.readdir("/work")).map((e) => e.name);
      const big = (await again.fs.readFile("big.bin")).length;
      again.close();
      return {error, names, big};
    }""")
    assert r["error"] is None
    assert r["names"] == ["after.txt", "big.bin", "by-tool.txt", "small.txt"] and r["big"] == 1024 * 1024
