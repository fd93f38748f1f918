"""The preview's side in the harness (harness/preview.py): the files it reads (inside the
workspace, under the model's read rules, bounded), the loads' reports, and the
preview_errors tool, which waits for the load that saw the model's last change."""

import asyncio
import json

from harness import preview as pv
from harness.runtime.native import NativeRuntime
from harness.session import Session


def make(tmp_path, turns=(), **options):
    runtime = NativeRuntime(str(tmp_path / "ws"))
    config = {"model": {"api": "scripted", "turns": list(turns)}, "preview": True, **options}
    return Session.from_options(json.dumps(config), runtime), runtime


def ask(session, **request):
    reply = session.preview.answer(json.dumps(request))
    return reply if isinstance(reply, bytes) else json.loads(reply)


def report(session, **fields):
    base = {"op": "report", "root": "/work/site", "entry": "/index.html", "load": 1,
            "state": "loaded", "seen": -1, "entries": []}
    assert ask(session, **{**base, **fields}) == {"ok": True, "value": None}


def test_reads_are_the_workspaces_under_the_read_rules_and_bounded(tmp_path, monkeypatch):
    s, _ = make(tmp_path, permissions={"read": {"secret/**": "deny"}})
    ws = tmp_path / "ws"
    (ws / "site").mkdir(parents=True)
    (ws / "site" / "a.css").write_text("h1{}")
    (ws / "secret").mkdir()
    (ws / "secret" / "key.txt").write_text("k")
    assert ask(s, op="read", path="site/a.css") == b"h1{}"
    assert ask(s, op="read", path="/work/site/a.css") == b"h1{}"
    denied = ask(s, op="read", path="secret/key.txt")
    assert denied["code"] == "EACCES" and "read rule" in denied["message"]
    assert ask(s, op="read", path="../outside")["code"] in ("EACCES", "EINVAL")
    assert ask(s, op="read", path="site/none.js")["code"] == "ENOENT"
    assert ask(s, op="read", path="site")["code"] == "EISDIR"
    assert ask(s, op="read", path="site/a\0.css")["code"] == "EINVAL"
    monkeypatch.setattr(pv, "MAX_FILE_BYTES", 3)
    big = ask(s, op="read", path="site/a.css")
    assert big["code"] == "EFBIG" and "up to 3" in big["message"]
    assert ask(s, op="nope")["code"] == "EINVAL"
    assert ask(s, op="report", root=5)["code"] == "EINVAL"
    assert s.preview.answer("not json")  # a reply, never a raise


def test_the_tool_waits_for_the_load_that_saw_the_last_change(tmp_path, monkeypatch):
    monkeypatch.setattr(pv, "FIRST_WAIT_S", 0.05)  # (no preview yet: a first report may come)
    s, _ = make(tmp_path)
    tool = s.agent.tools.get("preview_errors")
    assert tool is not None
    ctx = s.agent.context

    async def go():
        none = await tool.run(tool.Params(), ctx)
        report(s, seen=-1, entries=[{"level": "error", "text": "old"}])
        s.preview.changed("/work/site/app.mjs", 7)  # the model's write went to the page
        s.preview.changed("/work/elsewhere.txt", 9)  # not under the root: no reload
        waiting = asyncio.ensure_future(tool.run(tool.Params(), ctx))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        report(s, load=2, state="loading", seen=7)
        await asyncio.sleep(0.05)
        assert not waiting.done()
        report(s, load=2, state="loaded", seen=7,
               entries=[{"level": "error", "text": "Uncaught TypeError: x"},
                        {"level": "log", "text": "hi"}, {"level": "bogus", "text": "?"}])
        return none, await waiting

    none, text = asyncio.run(go())
    assert none.startswith("No preview is open")
    assert text.splitlines() == [
        "Preview of /work/site/index.html (load 2, loaded): 1 errors, 0 warnings, 1 log lines.",
        "error: Uncaught TypeError: x", "log: hi"]


def test_the_tool_says_when_the_preview_did_not_reload_in_time(tmp_path, monkeypatch):
    monkeypatch.setattr(pv, "WAIT_S", 0.1)
    s, _ = make(tmp_path)
    report(s, seen=3)
    s.preview.changed("/work/site/index.html", 4)
    tool = s.agent.tools.get("preview_errors")
    text = asyncio.run(tool.run(tool.Params(), s.agent.context))
    assert "it has not reloaded after your last change yet" in text
    assert "The console is empty." in text


def test_a_full_load_is_taken_and_its_text_made_safe(tmp_path):
    s, _ = make(tmp_path)
    full = [{"level": "error", "text": "\ud800" + "x" * 2099}] * 200  # the page's bounds
    report(s, entries=full)
    kept = s.preview.report["entries"]
    assert len(kept) == 200 and all(len(e["text"]) == pv.MAX_ENTRY_CHARS for e in kept)
    assert kept[0]["text"].startswith("\ufffd")  # a lone surrogate never reaches the model
    too_many = ask(s, op="report", root="/work/site", state="loaded",
                   entries=[{"level": "log", "text": "y" * 10_000}] * 300)
    assert too_many["code"] == "EINVAL"  # past any page's report: refused, nothing kept
    assert s.preview.report["entries"] == kept


def test_the_output_is_bounded_and_the_tool_is_off_by_default(tmp_path):
    entries = [{"level": "log", "text": "x" * 2000}] * 200
    text = pv.describe({"root": "/work", "entry": "/index.html", "load": 1, "state": "loaded",
                        "seen": 0, "entries": entries}, 0)
    assert len(text) <= pv.MAX_OUTPUT_CHARS + 200 and "more entries left out" in text
    s, _ = make(tmp_path / "b", preview=False)
    assert s.agent.tools.get("preview_errors") is None
    # the page's reads work either way (the page may preview without the model's tool)
    (tmp_path / "b" / "ws" / "i.html").write_text("<p>")
    assert ask(s, op="read", path="i.html") == b"<p>"
