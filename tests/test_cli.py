"""The `pyharness` command on CPython."""

import json

from tooling.cli import main


def test_run_drives_the_agent_over_a_directory(tmp_path, capsys):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [
        {"toolCalls": [{"name": "write", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"text": "ok"},
    ]}))
    assert main(["run", "--workspace", str(tmp_path / "ws"), "--script", str(script), "go"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert events[-1]["type"] == "run_end" and events[-1]["text"] == "ok"
    assert (tmp_path / "ws" / "a.txt").read_text() == "x"


def test_schema_prints_the_json_schema(capsys):
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "PyharnessEvent"


def test_run_keeps_threads_in_a_directory_and_continues_them(tmp_path, capsys):
    """``--threads DIR``: the next ``pyharness run`` continues the conversation, as a
    reload does in the browser; ``--new-thread`` starts another beside it."""
    from harness.threads import ThreadStore

    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "noted"}]}))
    common = ["run", "--workspace", str(tmp_path / "ws"), "--script", str(script),
              "--threads", str(tmp_path / "threads")]
    assert main([*common, "remember 42"]) == 0
    assert main([*common, "what was it?"]) == 0
    store = ThreadStore(str(tmp_path / "threads"))
    assert [m.role for m in store.current.history] == ["user", "assistant"] * 2
    assert store.current.history[0].text == "remember 42"
    assert store.current.title == "remember 42"
    assert main([*common, "--new-thread", "fresh start"]) == 0
    store = ThreadStore(str(tmp_path / "threads"))
    assert len(store.threads) == 2 and len(store.current.history) == 2
    capsys.readouterr()


def test_run_keeps_threads_in_memory_by_default_and_never_in_the_workspace(tmp_path, capsys):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "ok"}]}))
    run = ["run", "--workspace", str(tmp_path / "ws"), "--script", str(script)]
    assert main([*run, "go"]) == 0
    # Nothing written for the threads: a one-off command leaves no state behind.
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["s.json"]
    assert main([*run, "--threads", str(tmp_path / "ws" / "state"), "go"]) == 1
    assert "inside the workspace" in capsys.readouterr().err
