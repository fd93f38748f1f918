"""The workspace as a zip (harness/archive.py): out and back in, and hostile archives."""

from __future__ import annotations

import io
import json
import stat
import zipfile
from pathlib import Path

import pytest

from harness import fsops
from harness.archive import MAX_ENTRIES, export_zip, import_zip
from harness.errors import FsError
from harness.jail import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "work")


def zip_of(entries: dict[str, bytes], **attrs: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name)
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


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/evil", "a/../../evil", "..\\evil.txt",
                                  "a/b/../../../evil"])
def test_zip_slip_writes_nothing(ws: Workspace, name: str) -> None:
    with pytest.raises(FsError) as err:
        import_zip(ws, zip_of({"fine.txt": b"ok", name: b"evil"}))
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
