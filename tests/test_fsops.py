"""Every h.fs operation and its error codes, through the same entry the worker uses."""

import json
import os

import pytest

from harness.workspace.fsops import dispatch, parse_request
from harness.workspace.jail import Workspace


class Fs:
    """Calls operations the way embed/worker/worker.mjs does: a JSON request plus bytes."""

    def __init__(self, ws):
        self.ws = ws

    def __call__(self, op, data=None, **args):
        return dispatch(self.ws, parse_request(json.dumps({"op": op, **args})), data)

    def code(self, op, data=None, **args):
        from harness.errors import FsError

        with pytest.raises(FsError) as info:
            self(op, data, **args)
        return info.value.code


@pytest.fixture
def fs(tmp_path):
    return Fs(Workspace(tmp_path / "ws"))


def test_write_then_read_bytes_and_append(fs):
    fs("writeFile", b"hello", path="a.txt")
    assert fs("readFile", path="/work/a.txt") == b"hello"
    fs("writeFile", b" world", path="a.txt", append=True)
    assert fs("readFile", path="a.txt") == b"hello world"
    fs("writeFile", b"new", path="a.txt")
    assert fs("readFile", path="a.txt") == b"new"


def test_append_creates_missing_file(fs):
    fs("writeFile", b"x", path="log.txt", append=True)
    assert fs("readFile", path="log.txt") == b"x"


def test_binary_round_trip_all_byte_values(fs):
    data = bytes(range(256)) * 3
    fs("writeFile", data, path="bin.dat")
    assert fs("readFile", path="bin.dat") == data


def test_write_leaves_no_temporary_files(fs):
    fs("writeFile", b"1", path="a")
    fs("writeFile", b"2", path="a")
    assert [e["name"] for e in fs("readdir", path=".")] == ["a"]


def test_write_keeps_mode_of_existing_file(fs):
    fs("writeFile", b"#!/bin/sh", path="run.sh")
    os.chmod(fs.ws.resolve("run.sh").real, 0o755)
    fs("writeFile", b"#!/bin/sh\n", path="run.sh")
    assert fs("stat", path="run.sh")["mode"] == 0o755


def test_read_errors(fs):
    fs("mkdir", path="d")
    assert fs.code("readFile", path="missing") == "ENOENT"
    assert fs.code("readFile", path="d") == "EISDIR"
    assert fs.code("readFile", path="/etc/passwd") == "EACCES"
    fs("writeFile", b"", path="f")
    assert fs.code("readFile", path="f/x") == "ENOTDIR"


def test_write_errors(fs):
    fs("mkdir", path="d")
    fs("writeFile", b"", path="f")
    assert fs.code("writeFile", b"x", path="no/such/dir/a") == "ENOENT"
    assert fs.code("writeFile", b"x", path="d") == "EISDIR"
    assert fs.code("writeFile", b"x", path="f/a") == "ENOTDIR"
    assert fs.code("writeFile", b"x", path="../escape") == "EACCES"
    assert fs.code("writeFile", None, path="a") == "EINVAL"


def test_readdir_lists_sorted_entries_with_types(fs):
    fs("mkdir", path="b")
    fs("writeFile", b"", path="a.txt")
    fs("writeFile", b"", path=".hidden")
    assert fs("readdir", path="/work") == [
        {"name": ".hidden", "type": "file"},
        {"name": "a.txt", "type": "file"},
        {"name": "b", "type": "dir"},
    ]
    assert fs("readdir", path="b") == []
    assert fs.code("readdir", path="a.txt") == "ENOTDIR"
    assert fs.code("readdir", path="nope") == "ENOENT"


def test_stat(fs):
    fs("writeFile", b"12345", path="f")
    st = fs("stat", path="f")
    assert st["type"] == "file" and st["size"] == 5 and st["mode"] == 0o644
    assert st["mtime"] > 1e12  # milliseconds
    assert fs("stat", path="/work")["type"] == "dir"
    assert fs.code("stat", path="nope") == "ENOENT"


def test_mkdir(fs):
    fs("mkdir", path="a")
    assert fs.code("mkdir", path="a") == "EEXIST"
    assert fs.code("mkdir", path="x/y") == "ENOENT"
    fs("mkdir", path="x/y/z", recursive=True)
    fs("mkdir", path="x/y/z", recursive=True)  # exists: fine when recursive
    assert fs("stat", path="x/y/z")["type"] == "dir"
    fs("writeFile", b"", path="f")
    assert fs.code("mkdir", path="f", recursive=True) == "EEXIST"
    assert fs.code("mkdir", path="f/sub", recursive=True) == "ENOTDIR"
    assert fs.code("mkdir", path="/work2", recursive=True) == "EACCES"


def test_rm(fs):
    fs("mkdir", path="d/e/f", recursive=True)
    fs("writeFile", b"", path="d/e/f/x")
    fs("writeFile", b"", path="file")
    assert fs.code("rm", path="d") == "ENOTEMPTY"  # as rmdir(2); recursive removes it
    fs("mkdir", path="empty")
    fs("rm", path="empty")  # an empty directory goes without recursive
    assert fs.code("stat", path="empty") == "ENOENT"
    assert fs.code("rm", path="file/x") == "ENOTDIR"
    assert fs.code("rm", path="missing") == "ENOENT"
    fs("rm", path="missing", force=True)
    fs("rm", path="file/x", force=True)  # as rm -rf file/x: a path through a file is absent
    fs("rm", path="file/x/y", recursive=True, force=True)
    assert fs("stat", path="file")["type"] == "file"  # and the file itself stays
    assert fs.code("rm", path="d", force=True) == "ENOTEMPTY"  # force hides nothing else
    fs("rm", path="file")
    fs("rm", path="d", recursive=True)
    assert fs("readdir", path=".") == []
    assert fs.code("rm", path="/work", recursive=True) == "EPERM"
    assert fs.code("rm", path="..", recursive=True, force=True) == "EACCES"


def test_rename(fs):
    fs("writeFile", b"1", path="a")
    fs("rename", **{"from": "a", "to": "b"})
    assert fs("readFile", path="b") == b"1"
    assert fs.code("rename", **{"from": "a", "to": "c"}) == "ENOENT"
    fs("mkdir", path="d/inner", recursive=True)
    fs("writeFile", b"", path="d/inner/x")
    fs("mkdir", path="e/inner", recursive=True)
    fs("writeFile", b"", path="e/inner/y")
    assert fs.code("rename", **{"from": "d/inner", "to": "e/inner"}) == "ENOTEMPTY"
    assert fs.code("rename", **{"from": "b", "to": "e"}) == "EISDIR"
    assert fs.code("rename", **{"from": "d", "to": "b"}) == "ENOTDIR"
    assert fs.code("rename", **{"from": "d", "to": "d/inner/deeper"}) == "EINVAL"
    assert fs.code("rename", **{"from": "b", "to": "/tmp/b"}) == "EACCES"
    assert fs.code("rename", **{"from": "/work", "to": "w"}) == "EPERM"
    fs("writeFile", b"2", path="c")
    fs("rename", **{"from": "c", "to": "b"})  # replaces a file
    assert fs("readFile", path="b") == b"2"


@pytest.mark.parametrize(
    ("request_json", "message"),
    [
        ('{"op": "chmod", "path": "a"}', "unknown fs operation 'chmod'"),
        ('{"path": "a"}', "missing 'op'"),
        ('{"op": "stat", "path": 3}', "'path'"),
        ('{"op": "stat"}', "'path': Field required"),
        ('{"op": "mkdir", "path": "a", "recursive": "yes"}', "'recursive'"),
        ('{"op": "stat", "path": "a", "extra": 1}', "'extra'"),
        ("not json", "invalid argument"),
        ("[1]", "object"),
    ],
)
def test_bad_requests_are_einval(fs, request_json, message):
    from harness.errors import FsError

    with pytest.raises(FsError) as info:
        parse_request(request_json)
    assert info.value.code == "EINVAL"
    assert message in info.value.message
