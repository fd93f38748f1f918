import os
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import FsError
from harness.workspace.jail import Workspace, normalize
from harness.workspace.paths import MOUNT


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a.txt", "/work/a.txt"),
        ("./a/../b", "/work/b"),
        (".", "/work"),
        ("/work", "/work"),
        ("/work/", "/work"),
        ("/work/src//x.py", "/work/src/x.py"),
        ("//work/x", "/work/x"),
        ("/work/a/../../work/b", "/work/b"),
        ("dir/", "/work/dir"),
    ],
)
def test_inside_paths_normalize(given, expected):
    assert normalize(given) == expected


@pytest.mark.parametrize(
    "outside",
    ["/etc/passwd", "/", "..", "../x", "a/../../x", "/work/../etc", "/work2", "/work2/x",
     "/workspace", "/tmp/x", "//etc", "/work/../work2/x"],
)
def test_outside_paths_are_eacces(outside):
    with pytest.raises(FsError) as info:
        normalize(outside)
    assert info.value.code == "EACCES"
    assert MOUNT in info.value.message


@pytest.mark.parametrize(("bad", "why"), [("", "empty"), (None, "string"), (3, "string"),
                                         ("a\x00b", "NUL")])
def test_bad_paths_are_einval(bad, why):
    with pytest.raises(FsError) as info:
        normalize(bad)
    assert info.value.code == "EINVAL"
    assert why in info.value.message


def test_resolve_maps_onto_the_real_root(tmp_path):
    ws = Workspace(tmp_path / "root")
    assert ws.resolve("a/b.txt").real == os.path.join(ws.root, "a", "b.txt")
    assert ws.resolve("/work").real == ws.root
    assert ws.resolve("/work").is_root
    assert ws.shown(os.path.join(ws.root, "a", "b")) == "/work/a/b"


def test_outside_error_reveals_nothing_about_existence(tmp_path):
    ws = Workspace(tmp_path)
    with pytest.raises(FsError) as exists:
        ws.resolve("/etc/passwd")
    with pytest.raises(FsError) as missing:
        ws.resolve("/etc/no-such-file")
    assert exists.value.code == missing.value.code == "EACCES"
    assert exists.value.message.replace("passwd", "X") == missing.value.message.replace(
        "no-such-file", "X")


def test_symlink_planted_inside_cannot_lead_outside(tmp_path):
    # The harness never creates symlinks, but one made by other means must not escape.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("s")
    ws = Workspace(tmp_path / "ws")
    os.symlink(outside, os.path.join(ws.root, "link"))
    with pytest.raises(FsError) as info:
        ws.resolve("link/secret")
    assert info.value.code == "EACCES"


# --- trust_no_symlinks: realpath skipped while no symlink can be under a mount ----------


def _outside_link(tmp_path, ws, where="link"):
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("s")
    os.makedirs(os.path.dirname(os.path.join(ws.root, where)), exist_ok=True)
    os.symlink(outside, os.path.join(ws.root, where))


def test_trust_is_refused_while_a_symlink_is_there(tmp_path):
    ws = Workspace(tmp_path / "ws")
    _outside_link(tmp_path, ws, "a/b/deep/link")
    assert ws.trust_no_symlinks() is False
    with pytest.raises(FsError) as info:
        ws.resolve("a/b/deep/link/secret")
    assert info.value.code == "EACCES"


def test_trust_is_refused_for_a_symlink_under_an_extra_mount(tmp_path):
    ws = Workspace(tmp_path / "ws", extra_mounts={"/tmp": tmp_path / "scratch"})
    os.symlink("/", tmp_path / "scratch" / "root")
    assert ws.trust_no_symlinks() is False


def test_trusted_resolve_gives_the_same_paths(tmp_path):
    ws = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "d").mkdir()
    (tmp_path / "ws" / "d" / "f").write_text("x")
    paths = ["d/f", "/work", "/work/d/../d/f", "new/file", "./d"]
    before = [ws.resolve(p) for p in paths]
    assert ws.trust_no_symlinks() is True
    assert [ws.resolve(p) for p in paths] == before
    for bad in ["../x", "/etc/passwd", "/work/../x"]:  # the lexical checks still run
        with pytest.raises(FsError):
            ws.resolve(bad)


def test_symlinks_possible_brings_the_check_back(tmp_path):
    # The contract: whoever may add a symlink says so first (the worker's FS hooks).
    ws = Workspace(tmp_path / "ws")
    assert ws.trust_no_symlinks() is True
    ws.symlinks_possible()
    _outside_link(tmp_path, ws)
    with pytest.raises(FsError) as info:
        ws.resolve("link/secret")
    assert info.value.code == "EACCES"
    assert ws.trust_no_symlinks() is False  # and trust comes back only without symlinks
    os.unlink(os.path.join(ws.root, "link"))
    assert ws.trust_no_symlinks() is True


_SEGMENTS = ["..", ".", "", "work", "d", "f", "nosuch", "tmp", "\x00", "x" * 256, "\ud800"]
_PATHS = st.builds(lambda lead, parts: lead + "/".join(parts),
                   st.sampled_from(["", "/", "//", "/work/", "./", "/tmp/"]),
                   st.lists(st.one_of(st.sampled_from(_SEGMENTS), st.text(max_size=3)),
                            max_size=8))


def _answer(ws, path):
    try:
        return ws.resolve(path)
    except FsError as exc:
        return (exc.code, str(exc))


@settings(max_examples=300, deadline=None)
@given(path=_PATHS)
def test_trusted_and_checked_resolve_agree_without_symlinks(tmp_path_factory, path):
    tmp = tmp_path_factory.mktemp("t")
    checked = Workspace(tmp / "ws", extra_mounts={"/tmp": tmp / "scratch"})
    (tmp / "ws" / "d").mkdir()
    (tmp / "ws" / "d" / "f").write_text("x")
    trusted = Workspace(tmp / "ws", extra_mounts={"/tmp": tmp / "scratch"})
    assert trusted.trust_no_symlinks() is True
    assert _answer(trusted, path) == _answer(checked, path)


@pytest.mark.skipif(sys.platform != "emscripten", reason="the worker's hooks, in Pyodide")
def test_worker_hooks_take_the_trust_back(tmp_path):
    # embed/worker/worker.mjs's watchLinks over a stand-in filesystem: which calls end the trust.
    import js
    from pyodide.code import run_js
    from pyodide.ffi import create_proxy

    def watched():
        ws = Workspace(tmp_path / "ws")
        fs = run_js("({ symlink() {}, mount() {}, rename() {} })")
        js.pyharnessWorker.watchLinks(fs, create_proxy(ws))
        assert ws._link_free is True
        return ws, fs

    ws, fs = watched()
    for source, target in [("/work/a", "/work/b"), ("/work/a", "/tmp/a"),
                           ("/state/t.tmp", "/state/t"), ("/work/d/x", "/work/y")]:
        fs.rename(source, target)
        assert ws._link_free is True, (source, target)
    for call in [lambda fs: fs.symlink("/etc", "/tmp/l"), lambda fs: fs.mount(None, {}, "/x"),
                 lambda fs: fs.rename("/tmp/a", "/work/a"),
                 lambda fs: fs.rename("/work/../tmp/a", "/work/b"),
                 lambda fs: fs.rename("/work/a", "/work/./b"),
                 lambda fs: fs.rename("tmp/a", "/tmp/b")]:
        ws, fs = watched()
        call(fs)
        assert ws._link_free is False
    (tmp_path / "ws" / "link").symlink_to(tmp_path)  # no trust while a symlink is there
    ws = Workspace(tmp_path / "ws")
    js.pyharnessWorker.watchLinks(run_js("({ symlink() {}, mount() {}, rename() {} })"),
                                  create_proxy(ws))
    assert ws._link_free is False


@pytest.mark.skipif(sys.platform != "emscripten",
                    reason="whileTrusted is JS in embed/worker/worker.mjs, which only the "
                           "in-Pyodide tier loads (tests/pyodide/run.mjs)")
def test_worker_asks_the_jail_once_per_path_only_while_trusted(tmp_path):
    # embed/worker/worker.mjs's whileTrusted over fsops.readable_path: the jail's own answers
    # (refusals included), each path asked once while trusted, every time once the trust
    # is gone, and at most `limit` paths remembered.
    import js
    from pyodide.ffi import create_proxy

    from harness.workspace.fsops import readable_path

    ws = Workspace(tmp_path / "ws")
    (tmp_path / "ws" / "a.txt").write_text("a")
    asked: list[str] = []
    trusted = [True]

    def decide(path: str) -> str | None:
        asked.append(path)
        return readable_path(ws, path)

    def memo(limit: int) -> Any:
        return js.pyharnessWorker.whileTrusted(create_proxy(decide),
                                               create_proxy(lambda: trusted[0]), limit)

    paths = ["a.txt", "/work/a.txt", "../etc/passwd", "/tmp/x", "d/../a.txt",
             "\ud800.txt", "a/" * 3000, "/work/../work/a.txt"]
    read = memo(100)
    for path in paths * 3:
        answer = read(path)
        assert (None if answer is None else str(answer)) == readable_path(ws, path), path
    assert asked == paths  # each path once
    assert readable_path(ws, "../etc/passwd") is None  # a refusal is remembered as one

    asked.clear()
    small = memo(2)
    for path in ["a.txt", "b", "c", "a.txt", "c"]:  # "c" found it full: it started again
        small(path)
    assert asked == ["a.txt", "b", "c", "a.txt"]  # the last "c" from the new memo

    asked.clear()
    trusted[0] = False
    for path in paths * 2:
        answer = read(path)
        assert (None if answer is None else str(answer)) == readable_path(ws, path), path
    assert asked == paths * 2  # without the trust, every call asks
