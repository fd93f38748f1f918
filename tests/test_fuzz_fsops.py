"""h.fs against the operating system: random operation sequences, op by op.

Each sequence runs twice from an empty directory: through ``fsops`` (the request the
page sends, parsed and dispatched as the worker does) and as the plain ``os`` calls
Linux answers for the same operation. After every operation the two results (value or
error code) and the two whole trees must be equal.
"""

import errno
import json
import os
import shutil
import stat as stat_mod
import tempfile
import time

from fuzz_scale import fuzz_settings, report, scale
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import FsError
from harness.workspace import fsops
from harness.workspace.jail import Workspace

NAMES = ["a", "b", "c"]
path = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)
path_or_root = st.one_of(path, st.just("."))
data = st.sampled_from([b"", b"1", b"22", b"\x00\xff"])
operation = st.one_of(
    st.tuples(st.just("writeFile"), path, data, st.booleans()),
    st.tuples(st.just("readFile"), path),
    st.tuples(st.just("readdir"), path_or_root),
    st.tuples(st.just("stat"), path_or_root),
    st.tuples(st.just("mkdir"), path, st.booleans()),
    st.tuples(st.just("rm"), path, st.booleans(), st.booleans()),
    st.tuples(st.just("rename"), path, path),
)


def via_fsops(ws, op):
    """The operation as the page sends it: JSON request (+ bytes) through the bridge."""
    name, target, *rest = op
    args = {"op": name, "path": target}
    payload = None
    if name == "writeFile":
        payload, args["append"] = rest
    elif name == "mkdir":
        (args["recursive"],) = rest
    elif name == "rm":
        args["recursive"], args["force"] = rest
    elif name == "rename":
        args = {"op": name, "from": target, "to": rest[0]}
    try:
        value = fsops.dispatch(ws, fsops.parse_request(json.dumps(args)), payload)
    except FsError as exc:
        return ("error", exc.code)
    if name == "stat":
        value = (value["type"], value["size"] if value["type"] == "file" else None)
    return ("ok", value)


def via_os(root, op):
    """What Linux answers for the same operation (Node's fs, and so h.fs, name them so)."""
    name, target, *rest = op
    real = os.path.join(root, target) if target != "." else root
    try:
        return ("ok", _os_call(root, real, name, rest))
    except OSError as exc:
        return ("error", errno.errorcode[exc.errno])


def _os_call(root, real, name, rest):
    if name == "readFile":
        fd = os.open(real, os.O_RDONLY)
        try:
            return b"".join(iter(lambda: os.read(fd, 1 << 16), b""))
        finally:
            os.close(fd)
    if name == "writeFile":
        payload, append = rest
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC),
                     0o644)
        try:
            os.write(fd, payload)
        finally:
            os.close(fd)
        return None
    if name == "readdir":
        return sorted(({"name": e.name, "type": "dir" if e.is_dir() else "file"}
                       for e in os.scandir(real)), key=lambda e: e["name"])
    if name == "stat":
        st = os.lstat(real)
        kind = "dir" if stat_mod.S_ISDIR(st.st_mode) else "file"
        return (kind, st.st_size if kind == "file" else None)
    if name == "mkdir":
        (recursive,) = rest
        return os.makedirs(real, exist_ok=True) if recursive else os.mkdir(real)
    if name == "rm":
        recursive, force = rest
        try:
            st = os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):  # as GNU rm -f: both are "missing"
            if force:
                return None
            raise
        if not stat_mod.S_ISDIR(st.st_mode):
            return os.unlink(real)
        return shutil.rmtree(real) if recursive else os.rmdir(real)
    if name == "rename":
        return os.rename(real, os.path.join(root, rest[0]))
    raise AssertionError(name)


def tree(root):
    out = {}
    for directory, dirs, files in os.walk(root):
        rel = os.path.relpath(directory, root)
        for d in dirs:
            out[os.path.normpath(os.path.join(rel, d))] = "dir"
        for f in files:
            with open(os.path.join(directory, f), "rb") as fh:
                out[os.path.normpath(os.path.join(rel, f))] = fh.read()
    return out


def test_fsops_matches_linux_op_by_op():
    counts = {"sequences": 0, "ops": 0, "errors": 0}
    started = time.monotonic()

    @fuzz_settings(short=100, long=3000)
    @given(st.lists(operation, min_size=10, max_size=40))
    def check(ops):
        counts["sequences"] += 1
        with tempfile.TemporaryDirectory() as tmp:
            ws = Workspace(os.path.join(tmp, "ws"))
            ref = os.path.join(tmp, "ref")
            os.mkdir(ref)
            for number, op in enumerate(ops):
                got, want = via_fsops(ws, op), via_os(ref, op)
                assert got == want, f"op {number} {op}: h.fs {got}, Linux {want}"
                assert tree(ws.root) == tree(ref), f"trees differ after op {number} {op}"
                counts["ops"] += 1
                counts["errors"] += got[0] == "error"

    check()
    assert counts["ops"] >= scale(1000, 40_000)
    report("fsops-vs-linux", **counts, mismatches=0,
           seconds=round(time.monotonic() - started, 1))
