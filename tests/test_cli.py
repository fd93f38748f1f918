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
