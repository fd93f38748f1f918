"""The workspace as a zip (harness/workspace/archive.py): out and back in, and hostile archives."""

from __future__ import annotations

import errno
import io
import json
import os
import stat
import sys
import warnings
import zipfile
from pathlib import Path

import pytest

from harness.errors import FsError
from harness.workspace import archive, fsops
from harness.workspace.archive import MAX_ENTRIES, export_zip, import_zip
from harness.workspace.jail import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "work")


def zip_of(entries: dict[str, bytes], create_system: int = 3, **attrs: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
            info.create_system = create_system  # 3 (Unix) unless a test says MS-DOS (0)
            if name in attrs:
                info.external_attr = attrs[name]
            z.writestr(info, data)
    return out.getvalue()


def tree(root: str) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
            for p in sorted(Path(root).rglob("*"))}


def test_round_trip_through_the_fs_requests(ws: Workspace, tmp_path: Path) -> None:
    Path(ws.root, "src").mkdir()
    Path(ws.root, "src", "a.py").write_text("print('a')\n")
    Path(ws.root, "empty").mkdir()
    Path(ws.root, "data.bin").write_bytes(bytes(range(256)) * 10)
    data = fsops.dispatch(ws, fsops.parse_request('{"op": "exportZip"}'))
    assert zipfile.ZipFile(io.BytesIO(data)).namelist() == [
        "data.bin", "empty/", "src/", "src/a.py"]
    other = Workspace(tmp_path / "other")
    Path(other.root, "old.txt").write_text("replaced away")
    counts = fsops.dispatch(other, fsops.parse_request('{"op": "importZip", "replace": true}'),
                            data)
    assert counts == {"files": 2, "dirs": 2}
    assert tree(other.root) == tree(ws.root)


def test_import_merges_without_replace(ws: Workspace) -> None:
    Path(ws.root, "keep.txt").write_text("kept")
    import_zip(ws, zip_of({"new.txt": b"new"}))
    assert tree(ws.root) == {"keep.txt": b"kept", "new.txt": b"new"}


@pytest.mark.parametrize(("name", "system"), [
    ("../evil.txt", 3), ("/etc/evil", 3), ("a/../../evil", 3), ("..\\evil.txt", 0),
    ("a/b/../../../evil", 3), ("a\\..\\..\\evil", 0), ("\\etc\\evil", 0)])
def test_zip_slip_writes_nothing(ws: Workspace, name: str, system: int) -> None:
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({"fine.txt": b"ok", name: b"evil"}, create_system=system))
    assert err.value.code == "EACCES"
    assert tree(ws.root) == {}
    assert not (Path(ws.root).parent / "evil.txt").exists()


def test_symlink_entries_and_bombs_are_refused(ws: Workspace) -> None:
    link = (stat.S_IFLNK | 0o777) << 16
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({"link": b"/etc/passwd"}, link=link))
    assert err.value.code == "EINVAL" and "symlink" in err.value.message
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({f"f{i}": b"" for i in range(MAX_ENTRIES + 1)}))
    assert err.value.code == "EFBIG"
    with pytest.raises(FsError) as err:
        import_zip(ws, b"not a zip at all")
    assert err.value.code == "EINVAL"
    assert tree(ws.root) == {}


def test_a_bad_request_is_einval(ws: Workspace) -> None:
    with pytest.raises(FsError) as err:
        fsops.dispatch(ws, fsops.parse_request(json.dumps({"op": "importZip"})))
    assert err.value.code == "EINVAL"
    assert isinstance(export_zip(ws), bytes)


# --- all or nothing ------------------------------------------------------------------


def snapshot(root: str) -> dict[str, tuple[object, ...]]:
    """The tree below ``root``: every path's type, bytes (or link target) and mode."""
    out: dict[str, tuple[object, ...]] = {}
    for path in sorted(Path(root).rglob("*")):
        st = path.lstat()
        rel = str(path.relative_to(root))
        if stat.S_ISLNK(st.st_mode):
            out[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            out[rel] = ("dir", stat.S_IMODE(st.st_mode))
        else:
            out[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode), st.st_mtime_ns)
    return out


def populate(root: str) -> None:
    """A workspace the archive below overwrites, adds to and (with replace) clashes with:
    a directory where the archive has a file, a file where it has a directory."""
    Path(root, "src").mkdir()
    Path(root, "src", "a.py").write_text("old a\n")
    Path(root, "src", "keep.py").write_text("kept unless replaced\n")
    Path(root, "tool.sh").write_text("#!/bin/sh\n")
    Path(root, "tool.sh").chmod(0o755)
    Path(root, "readonly.txt").write_text("old, read-only")
    Path(root, "readonly.txt").chmod(0o444)
    Path(root, "clash").mkdir()
    Path(root, "clash", "inside.txt").write_text("a dir where the archive has a file")
    Path(root, "flat").write_text("a file where the archive has a directory")
    Path(root, "empty").mkdir()


ARCHIVE = {"src/": b"", "src/a.py": b"new a\n", "src/b.py": b"b\n", "tool.sh": b"echo\n",
           "deep/er/x.bin": bytes(range(256)), "new-empty/": b"",
           "empty/": b"", "back\\slash": b"one name"}
CLASHES = {"clash": b"now a file", "flat/inside.txt": b"now a dir"}


def failing_at(k: int, after: bool, exc: BaseException):
    """archive._do raising ``exc`` on its k-th call, before or after making the change."""
    original, calls = archive._do, [0]

    def do(zf: zipfile.ZipFile, step: archive._Step) -> None:
        calls[0] += 1
        if calls[0] == k:
            if after:
                original(zf, step)
            raise exc
        original(zf, step)
    return do, calls


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("after", [False, True])
def test_a_failing_write_at_any_step_changes_nothing(tmp_path: Path, replace: bool, after: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    data = zip_of({**ARCHIVE, **CLASHES} if replace else ARCHIVE)
    counted = Workspace(tmp_path / "count")
    populate(counted.root)
    do, calls = failing_at(0, after, OSError())
    monkeypatch.setattr(archive, "_do", do)
    import_zip(counted, data, replace=replace)
    steps = calls[0]
    assert steps >= len(ARCHIVE)
    for k in range(1, steps + 1):
        ws = Workspace(tmp_path / f"w{k}")
        populate(ws.root)
        before = snapshot(ws.root)
        do, _ = failing_at(k, after, OSError(errno.ENOSPC, "No space left on device"))
        monkeypatch.setattr(archive, "_do", do)
        with pytest.raises(FsError) as err:
            import_zip(ws, data, replace=replace)
        assert err.value.code == "ENOSPC" and "/work is as before" in err.value.message
        assert snapshot(ws.root) == before, f"step {k} of {steps}"


def test_replace_leaves_exactly_the_archive(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "w")
    populate(ws.root)
    counts = import_zip(ws, zip_of({**ARCHIVE, **CLASHES}), replace=True)
    assert counts == {"files": 7, "dirs": 3}
    assert tree(ws.root) == {
        "back\\slash": b"one name", "clash": b"now a file", "deep": None, "deep/er": None,
        "deep/er/x.bin": bytes(range(256)), "empty": None, "flat": None,
        "flat/inside.txt": b"now a dir", "new-empty": None, "src": None,
        "src/a.py": b"new a\n", "src/b.py": b"b\n", "tool.sh": b"echo\n"}


def test_a_cancel_mid_import_is_undone_and_passed_on(ws: Workspace,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    populate(ws.root)
    before = snapshot(ws.root)
    do, _ = failing_at(3, True, KeyboardInterrupt())
    monkeypatch.setattr(archive, "_do", do)
    with pytest.raises(KeyboardInterrupt):
        import_zip(ws, zip_of({**ARCHIVE, **CLASHES}), replace=True)
    assert snapshot(ws.root) == before


def test_an_undo_that_fails_says_so(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    do, _ = failing_at(2, True, OSError(errno.EIO, "Input/output error"))
    monkeypatch.setattr(archive, "_do", do)

    def put_back(real: str, was: object) -> None:
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(archive, "_put_back", put_back)
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({"a": b"1", "b": b"2"}))
    assert err.value.code == "EIO" and "undoing the import failed too" in err.value.message


def corrupted(entries: dict[str, bytes], victim: str, compression: int) -> bytes:
    """A zip of ``entries`` with one byte of ``victim``'s stored data flipped."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    data = bytearray(out.getvalue())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo(victim)
    name_len, extra_len = int.from_bytes(data[info.header_offset + 26:info.header_offset + 28],
                                         "little"), int.from_bytes(
        data[info.header_offset + 28:info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    data[start + info.compress_size // 2] ^= 0x55
    return bytes(data)


CRC_ENTRIES = {f"d{i % 2}/f{i}.txt": f"entry {i} ".encode() * (i + 1) for i in range(5)}


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("victim", list(CRC_ENTRIES))
def test_a_damaged_entry_anywhere_changes_nothing(ws: Workspace, replace: bool, compression: int,
                                                  victim: str) -> None:
    populate(ws.root)
    Path(ws.root, "d0").mkdir()
    Path(ws.root, "d0", "f0.txt").write_text("would be truncated by a careless import")
    before = snapshot(ws.root)
    with pytest.raises(FsError) as err:
        import_zip(ws, corrupted(CRC_ENTRIES, victim, compression), replace=replace)
    assert err.value.code == "EINVAL" and victim in err.value.message
    assert snapshot(ws.root) == before


def zip_of_list(entries: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(out, "w") as z:
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: that is the test
        for name, data in entries:
            z.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("entries", [
    [("x.txt", b"fine"), ("a", b"file"), ("a/b", b"below the file")],
    [("a/b", b"below"), ("a", b"then the file")],
    [("a", b"file"), ("a/", b"")],
    [("a/", b""), ("a", b"file")],
    [("a", b"one"), ("a", b"two")],
    [("d/", b""), ("d/", b"")],
    [("a/b", b"one"), ("a/./b", b"the same path")],
    [("a/b/c", b"deep"), ("a/b", b"a file where a parent must be")],
])
def test_a_file_and_directory_clash_inside_the_archive_changes_nothing(
        ws: Workspace, replace: bool, entries: list[tuple[str, bytes]]) -> None:
    populate(ws.root)
    before = snapshot(ws.root)
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of_list(entries), replace=replace)
    assert err.value.code == "EINVAL"
    assert "twice" in err.value.message or "both as a file and as a directory" in err.value.message
    assert snapshot(ws.root) == before


@pytest.mark.parametrize("entries", [
    {"ok.txt": b"x", "clash": b"a file where /work has a directory"},
    {"ok.txt": b"x", "flat/inside.txt": b"below a file of /work"},
    {"ok.txt": b"x", "flat/": b""},
    {"ok.txt": b"x", "flat/deeper/still.txt": b"below a file of /work"},
])
def test_a_clash_with_the_workspace_without_replace_changes_nothing(
        ws: Workspace, entries: dict[str, bytes]) -> None:
    populate(ws.root)
    before = snapshot(ws.root)
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of(entries))
    assert err.value.code == "EINVAL" and "import with replace" in err.value.message
    assert snapshot(ws.root) == before
    import_zip(ws, zip_of(entries), replace=True)  # what replace is for
    assert {k: v for k, v in tree(ws.root).items() if v is not None} == {
        k: v for k, v in entries.items() if not k.endswith("/")}


def test_replace_takes_out_symlinks_and_puts_them_back_on_failure(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    Path(ws.root, "target.txt").write_text("t")
    os.symlink("target.txt", os.path.join(ws.root, "link"))
    before = snapshot(ws.root)
    do, _ = failing_at(3, True, OSError(errno.ENOSPC, "No space left on device"))
    monkeypatch.setattr(archive, "_do", do)
    with pytest.raises(FsError):
        import_zip(ws, zip_of({"a": b"1", "b": b"2"}), replace=True)
    assert snapshot(ws.root) == before
    monkeypatch.undo()
    import_zip(ws, zip_of({"a": b"1", "b": b"2"}), replace=True)
    assert tree(ws.root) == {"a": b"1", "b": b"2"}


# --- names -----------------------------------------------------------------------------


def test_backslash_is_a_separator_only_in_msdos_archives(ws: Workspace) -> None:
    assert import_zip(ws, zip_of({"dir\\file.txt": b"dos", "dir2\\": b""},
                                 create_system=0)) == {"files": 1, "dirs": 1}
    assert tree(ws.root) == {"dir": None, "dir/file.txt": b"dos", "dir2": None}
    import_zip(ws, zip_of({"a\\b": b"one name", "..\\x": b"also one name"}))
    assert tree(ws.root)["a\\b"] == b"one name" and tree(ws.root)["..\\x"] == b"also one name"


def test_an_export_with_backslashes_and_odd_names_restores(ws: Workspace, tmp_path: Path) -> None:
    names = ["a\\b", "\\", "..\\up", " lead and trail ", "-rf", "tab\there", "nl\nhere",
             "\x01\x7f", "é" * 127 + "a", "😀.txt", "\u202eevil", "CON", "x:y"]
    for name in names:
        Path(ws.root, name).write_bytes(name.encode())
    deep = os.path.join(ws.root, *["d"] * 255)
    os.makedirs(deep)
    Path(deep, "bottom").write_bytes(b"256 levels down")
    other = Workspace(tmp_path / "other")
    import_zip(other, export_zip(ws))
    assert tree(other.root) == tree(ws.root)


@pytest.mark.skipif(sys.platform != "linux", reason="needs a filesystem that keeps any bytes "
                    "in a name (Pyodide's MEMFS turns them into U+FFFD)")
def test_export_refuses_a_name_that_is_not_utf8(ws: Workspace) -> None:
    # Only a file put in /work around the jail can have such a name; import would read
    # it back as U+FFFD, so the export says so instead of making a backup that differs.
    os.close(os.open(os.path.join(os.fsencode(ws.root), b"bad\xff"), os.O_CREAT | os.O_WRONLY))
    with pytest.raises(FsError) as err:
        export_zip(ws)
    assert err.value.code == "EILSEQ" and "rename it" in err.value.message


def test_export_refuses_more_than_import_takes(ws: Workspace,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(4):
        Path(ws.root, f"f{i}").write_bytes(b"12345")
    monkeypatch.setattr(archive, "MAX_ENTRIES", 3)
    with pytest.raises(FsError) as err:
        export_zip(ws)
    assert err.value.code == "EFBIG"
    monkeypatch.setattr(archive, "MAX_ENTRIES", 100)
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 19)
    with pytest.raises(FsError) as err:
        export_zip(ws)
    assert err.value.code == "EFBIG"


def test_an_entry_larger_than_it_says_stops_at_its_declared_size(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytearray(zip_of({"small.txt": b"x", "big.bin": b"\0" * 100_000}))
    central = data.rindex(b"PK\x01\x02")  # the last entry's central-directory header
    data[central + 24:central + 28] = (10).to_bytes(4, "little")  # says 10 bytes unpacked
    populate(ws.root)
    before = snapshot(ws.root)
    with pytest.raises(FsError) as err:
        import_zip(ws, bytes(data))
    assert err.value.code in ("EINVAL", "EFBIG") and "big.bin" in err.value.message
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 50_000)  # the declared sizes, up front
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({"big.bin": b"\0" * 100_000}))
    assert err.value.code == "EFBIG"
    assert snapshot(ws.root) == before


def test_an_import_past_the_workspace_bound_changes_nothing(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("harness.limits.MAX_WORKSPACE_ENTRIES", 5)
    for i in range(3):
        Path(ws.root, f"old{i}").write_bytes(b"x")
    before = snapshot(ws.root)
    with pytest.raises(FsError) as caught:  # 3 kept + 3 new > 5
        import_zip(ws, zip_of({"a": b"1", "b": b"2", "c": b"3"}))
    assert caught.value.code == "ENOSPC" and "6 files and directories" in str(caught.value)
    assert snapshot(ws.root) == before
    # replace: only the archive counts; overwriting a file adds nothing.
    import_zip(ws, zip_of({"old0": b"new", "a": b"1", "b": b"2"}))
    assert import_zip(ws, zip_of({"a": b"1", "b": b"2", "c": b"3", "d": b"4"}), replace=True)
    assert sorted(os.listdir(ws.root)) == ["a", "b", "c", "d"]
    monkeypatch.setattr("harness.limits.MAX_WORKSPACE_BYTES", 10)
    with pytest.raises(FsError, match="11 bytes"):
        import_zip(ws, zip_of({"big": b"x" * 11}), replace=True)
