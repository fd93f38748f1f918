"""h.fs in real Chromium: every operation, its error codes, bytes, close(). The page side of
each row is an export of e2e/pages/rows/fs.mjs."""

import hashlib

from e2e.conftest import call


def test_every_fs_op_and_its_error_codes(app):
    r = call(app, "fs.everyOpAndItsErrorCodes")
    assert r["text"] == "hello, world" and r["bytes"] == 12 and r["isU8"]
    assert r["appendNew"] == "x"
    assert r["stat"]["type"] == "file" and r["stat"]["size"] == 12 and r["stat"]["mode"] == 0o644
    assert r["stat"]["mtime"] > 1.5e12
    assert r["statDir"] == "dir"
    assert r["root"] == [{"name": "a.txt", "type": "file"}, {"name": "deep", "type": "dir"},
                         {"name": "log.txt", "type": "file"}]
    assert [e["name"] for e in r["afterRename"]] == ["b.txt", "er"]
    codes = {k: v.get("code") for k, v in r["errors"].items()}
    assert codes == {
        "enoent": "ENOENT", "eisdir": "EISDIR", "enotdir": "ENOTDIR", "eexist": "EEXIST",
        "mkdirNoParent": "ENOENT", "rmDir": "ENOTEMPTY", "rmEmptyDir": "ENOENT",
        "throughFile": "ENOTDIR", "rmMissing": "ENOENT",
        "enotempty": "ENOTEMPTY", "eacces": "EACCES", "escape": "EACCES", "sibling": "EACCES",
        "empty": "EINVAL", "badType": "EINVAL", "badData": "EINVAL", "badEncoding": "EINVAL",
        "unknownOp": "EINVAL", "rmRoot": "EPERM",
    }
    for err in r["errors"].values():
        assert err["ok"] is False and err["name"] == "HarnessError"
        assert err["message"].startswith(err["code"])
    assert "outside the workspace" in r["errors"]["eacces"]["message"]
    assert "/etc/passwd" in r["errors"]["eacces"]["message"]
    assert "unknown fs operation 'chmod'" in r["errors"]["unknownOp"]["message"]
    assert r["final"] == ["e", "log.txt"]


def test_binary_round_trip_all_byte_values(app):
    r = call(app, "fs.binaryRoundTripAllByteValues")
    expected = hashlib.sha256(bytes(range(256)) * 64).hexdigest()
    assert r["before"] == r["after"] == expected
    assert r["length"] == r["stillOurs"] == 256 * 64
    assert r["view"] == [0x02, 0x01, 0xFE, 0xFF]
    assert r["sub"] == [1, 2, 3] and r["ab"] == 256 * 64 and r["stillOursAfter"] == 256 * 64


def test_recursive_mkdir_and_rm_are_one_message_each(app):
    r = call(app, "fs.recursiveMkdirAndRmMessages")
    assert r == {"afterMkdir": 1, "rmMessages": 1, "left": []}


def test_close_rejects_pending_and_later_calls(app):
    r = call(app, "fs.closeWithCallsPending")
    for res in [*r["results"], r["after"], r["runDone"], r["promptAfter"]]:
        assert res["ok"] is False and res["code"] == "ECANCELED"
        assert "closed" in res["message"]


def test_worker_survives_bad_input(app):
    r = call(app, "fs.badInputThenAWrite")
    assert r["codes"] == ["EINVAL"] * 5
    assert r["text"] == "still alive"
