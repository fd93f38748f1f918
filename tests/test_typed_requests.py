"""The typed page requests: h.revert / h.diff (harness/workspace/checkpoints.py) and
h.threads.rewind (harness/threads.py), parsed from the JSON, not found by its text."""

import json

import pytest

from harness.errors import FsError
from harness.runtime.native import NativeRuntime
from harness.session import Session
from harness.threads import RewindRequest
from harness.workspace.checkpoints import CheckpointRequest, parse_request


def test_each_checkpoint_op_parses_to_its_request():
    assert parse_request('{"op": "list"}', True) == CheckpointRequest("list")
    assert parse_request('{"op": "diff", "runId": "r1"}', True) == CheckpointRequest("diff", "r1")
    assert parse_request('{"op": "revert", "runId": "r1", "dryRun": 1, "force": true}',
                         True) == CheckpointRequest("revert", "r1", dry_run=True, force=True)


@pytest.mark.parametrize(("text", "enabled", "message"), [
    ("not json", True, "a checkpoint request is {op, runId, ...}"),
    ("[1]", True, "a checkpoint request is {op, runId, ...}"),
    ('{"op": 3}', True, "a checkpoint request is {op, runId, ...}"),
    ('{"op": "list", "pad": "' + "x" * 5000 + '"}', True, "a checkpoint request is"),
    ('{"op": "revert"}', False, "checkpoints are off"),
    ('{"op": "revert"}', True, "runId must be the id of a run"),
    ('{"op": "diff", "runId": ""}', True, "runId must be the id of a run"),
    ('{"op": "x", "runId": "r1"}', True, "unknown checkpoint op 'x' (revert, diff, list)"),
])
def test_a_bad_checkpoint_request_says_what_is_wrong(text, enabled, message):
    with pytest.raises(FsError) as err:
        parse_request(text, enabled)
    assert err.value.code == "EINVAL" and message in err.value.message


def test_a_rewind_request_is_found_by_its_op_not_its_text(tmp_path):
    session = Session.from_options(json.dumps({"model": {"api": "scripted", "turns": []}}),
                                   NativeRuntime(str(tmp_path / "ws")))
    escaped = json.loads(session.threads('{"op": "\\u0072ewind", "runId": "nope"}'))
    assert escaped["code"] == "ENOENT" and "no run 'nope'" in escaped["message"]
    assert RewindRequest.from_request({"op": "rewind", "runId": 7}) == RewindRequest("")
    assert RewindRequest.from_request({"op": "rewind", "runId": "r1"}) == RewindRequest("r1")
