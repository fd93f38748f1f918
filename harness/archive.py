"""The whole workspace as one zip archive, out and in (``h.fs.exportZip`` /
``h.fs.importZip``), with the standard library's ``zipfile``.

An archive from the page is hostile input: every entry goes through the jail (a
``../`` or absolute name is refused, no "zip slip"), symlink entries are refused, and the
entry count, each entry's size and the total size are bounded before anything is written,
from the archive's own directory and again while reading (a zip bomb stops at the limit).
An import writes nothing unless every entry passed.
"""

from __future__ import annotations

import io
import os
import stat
import time
import zipfile
from typing import IO

from .errors import FsError
from .jail import MOUNT, Workspace

MAX_ENTRIES = 100_000
MAX_TOTAL_BYTES = 1024 * 1024 * 1024  # uncompressed
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024


def export_zip(ws: Workspace) -> bytes:
    """Every file and directory below /work, paths relative to it, deflated."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for real, rel, is_dir in _walk(ws.root):
            mtime = time.localtime(max(os.stat(real).st_mtime, 315532800))[:6]  # zip: 1980+
            if is_dir:
                z.writestr(zipfile.ZipInfo(rel + "/", date_time=mtime), b"")
                continue
            info = zipfile.ZipInfo(rel, date_time=mtime)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            with open(real, "rb") as f:
                z.writestr(info, f.read())
    return out.getvalue()


def import_zip(ws: Workspace, data: bytes, replace: bool = False) -> dict[str, int]:
    """Unpack ``data`` into /work (``replace``: empty /work first). Returns counts."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise FsError("EFBIG", f"the archive is {len(data):,} bytes; the limit is "
                      f"{MAX_ARCHIVE_BYTES:,}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FsError("EINVAL", f"not a zip archive ({exc})") from None
    plan = _plan(ws, entries)
    if replace:
        for name in os.listdir(ws.root):
            path = os.path.join(ws.root, name)
            if os.path.isdir(path) and not os.path.islink(path):
                _rmtree(path)
            else:
                os.unlink(path)
    files = dirs = 0
    with archive:
        for info, real in plan:
            try:
                if info.is_dir():
                    os.makedirs(real, exist_ok=True)
                    dirs += 1
                    continue
                os.makedirs(os.path.dirname(real), exist_ok=True)
                with archive.open(info) as src, open(real, "wb") as dst:
                    _copy_bounded(src, dst, info.file_size)
                files += 1
            except (OSError, zipfile.BadZipFile) as exc:  # e.g. a file where a dir must go
                if isinstance(exc, OSError):
                    raise FsError.from_os_error(exc, f"{MOUNT}/{info.filename}") from None
                raise FsError("EINVAL", f"{info.filename}: {exc}") from None
    return {"files": files, "dirs": dirs}


def _plan(ws: Workspace, entries: list[zipfile.ZipInfo]) -> list[tuple[zipfile.ZipInfo, str]]:
    """Check every entry before writing anything: where it goes, and the sizes."""
    if len(entries) > MAX_ENTRIES:
        raise FsError("EFBIG", f"the archive has {len(entries):,} entries; the limit is "
                      f"{MAX_ENTRIES:,}")
    total = sum(info.file_size for info in entries)
    if total > MAX_TOTAL_BYTES:
        raise FsError("EFBIG", f"the archive unpacks to {total:,} bytes; the limit is "
                      f"{MAX_TOTAL_BYTES:,}")
    plan = []
    for info in entries:
        name = info.filename.replace("\\", "/")
        if name.startswith("/") or any(part == ".." for part in name.split("/")):
            raise FsError("EACCES", f"the archive entry {name!r} points outside the workspace")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise FsError("EINVAL", f"the archive entry {name!r} is a symlink; the workspace "
                          "has none")
        resolved = ws.resolve(f"{MOUNT}/{name.rstrip('/')}")
        if resolved.is_root:
            continue
        plan.append((info, resolved.real))
    return plan


def _copy_bounded(src: IO[bytes], dst: IO[bytes], declared: int) -> None:
    written = 0
    while chunk := src.read(1024 * 1024):
        written += len(chunk)
        if written > declared:  # the directory lied about the size
            raise FsError("EFBIG", "an archive entry is larger than its declared size")
        dst.write(chunk)


def _walk(root: str) -> list[tuple[str, str, bool]]:
    out = []
    todo = [(root, "")]
    while todo:
        real, rel = todo.pop()
        for entry in sorted(os.scandir(real), key=lambda e: e.name):
            child = f"{rel}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                out.append((entry.path, child, True))
                todo.append((entry.path, child + "/"))
            elif entry.is_file(follow_symlinks=False):
                out.append((entry.path, child, False))
    return sorted(out, key=lambda item: item[1])


def _rmtree(path: str) -> None:
    for dirpath, dirnames, filenames in os.walk(path, topdown=False):
        for name in filenames:
            os.unlink(os.path.join(dirpath, name))
        for name in dirnames:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                os.unlink(full)
            else:
                os.rmdir(full)
    os.rmdir(path)
