import os

import pytest

from harness.errors import FsError
from harness.jail import MOUNT, Workspace, normalize


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
