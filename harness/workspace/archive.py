"""The whole workspace as one zip archive, out and in (``h.fs.exportZip`` /
``h.fs.importZip``), with the standard library's ``zipfile``.

An archive from the page is hostile input, and an import is all or nothing. Before
anything is changed, every entry is checked: its name goes through the jail (a ``../``
or absolute name is refused, no "zip slip"), symlink entries are refused, the entry
count, each entry's size and the total size are bounded (from the archive's directory,
and again while reading, so a zip bomb stops at the limit), every entry is read once to
check its CRC, and the entries must form a tree (no name twice, no name both a file and a
directory) that fits the workspace (without ``replace``, an archive file cannot land on
a directory of the workspace, nor an archive path below a file of it). Only then is
anything written, under an undo log: each change first remembers what was at its path
(a file's bytes, mode and times; a directory's mode; a link's target), and a failure
while writing (``ENOSPC``, say) puts every path back, in reverse order, before the error
is raised. In the browser every change to /work is mirrored to OPFS, so a state left
behind halfway would be durable: there is none.

Names: a backslash is a character of a file name (``a\\b`` is one POSIX name, and the
workspace can hold it), except in archives made on MS-DOS/Windows (``create_system`` 0),
where it is a separator, as Info-ZIP's unzip reads them. Our exports say Unix (3), and
export refuses any name that import would not read back unchanged, so a backup always
restores.
"""

from __future__ import annotations

import io
import os
import stat
import time
import zipfile
from dataclasses import dataclass
from typing import IO

from .. import limits
from ..errors import FsError
from ..limits import shorten
from .jail import Workspace, normalize
from .paths import MOUNT

MAX_ENTRIES = 100_000
MAX_TOTAL_BYTES = 1024 * 1024 * 1024  # uncompressed
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024
_CHUNK = 1024 * 1024
_MSDOS = 0  # ZipInfo.create_system of MS-DOS/Windows archivers
_UNIX = 3


# --- export --------------------------------------------------------------------------


def export_zip(ws: Workspace) -> bytes:
    """Every file and directory below /work, paths relative to it, deflated. Refuses
    (``EFBIG``, ``EILSEQ``, ``ENAMETOOLONG``) a workspace that :func:`import_zip` could
    not read back whole: a backup that cannot be restored is worse than none."""
    items = [(rel, kind) for rel, kind in _scan(ws.root) if kind in ("dir", "file")]
    if len(items) > MAX_ENTRIES:
        raise FsError("EFBIG", f"/work holds {len(items):,} files and directories; an "
                      f"archive may hold {MAX_ENTRIES:,} (importZip's limit)")
    out = io.BytesIO()
    total = 0
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for rel, kind in items:
            _check_exportable(rel)
            real = os.path.join(ws.root, rel)
            st = os.stat(real)
            info = zipfile.ZipInfo(rel + "/" if kind == "dir" else rel, _zip_time(st.st_mtime))
            info.create_system = _UNIX  # so that import takes a "\" in a name literally
            if kind == "dir":
                info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10  # 0x10: MS-DOS dir
                z.writestr(info, b"")
                continue
            total += st.st_size
            if total > MAX_TOTAL_BYTES:
                raise FsError("EFBIG", f"/work holds more than {MAX_TOTAL_BYTES:,} bytes; "
                              "importZip unpacks at most that much")
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            with open(real, "rb") as f:
                z.writestr(info, f.read())
    if out.tell() > MAX_ARCHIVE_BYTES:
        raise FsError("EFBIG", f"the archive would be {out.tell():,} bytes; importZip takes "
                      f"at most {MAX_ARCHIVE_BYTES:,}")
    return out.getvalue()


def _check_exportable(rel: str) -> None:
    """Refuse a name that import would refuse or read differently: one that is not UTF-8
    (import would get U+FFFD), or over the jail's limits. Names made through the jail
    always pass; this is for files put in /work some other way."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        shown = rel.encode("utf-8", "replace").decode("utf-8")
        raise FsError("EILSEQ", f"cannot export '/work/{shorten(shown)}': its name is not "
                      "valid UTF-8; rename it") from None
    try:
        normalize(f"{MOUNT}/{rel}")
    except FsError as exc:
        raise FsError(exc.code, f"cannot export: {exc.message}; rename or move it") from None


def _zip_time(mtime: float) -> tuple[int, int, int, int, int, int]:
    t = time.localtime(max(mtime, 315532800))  # zip dates start in 1980
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


# --- import: check everything -------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """A path the archive makes: explicitly (``info``) or as the parent of one."""

    rel: str  # below /work, as the jail normalised it
    is_dir: bool
    info: zipfile.ZipInfo | None  # None: a directory only implied by a deeper entry
    source: str  # the entry's name as written, for messages


@dataclass(frozen=True)
class _Step:
    """One change to the workspace: ``remove``, ``mkdir`` or ``write``."""

    op: str
    rel: str
    real: str
    info: zipfile.ZipInfo | None = None


def import_zip(ws: Workspace, data: bytes, replace: bool = False) -> dict[str, int]:
    """Unpack ``data`` into /work; with ``replace``, /work ends up holding exactly the
    archive. All or nothing (see the module's docstring). Returns the entries' counts."""
    if len(data) > MAX_ARCHIVE_BYTES:
        raise FsError("EFBIG", f"the archive is {len(data):,} bytes; the limit is "
                      f"{MAX_ARCHIVE_BYTES:,}")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FsError("EINVAL", f"not a zip archive ({exc})") from None
    with archive:
        entries = _entries(ws, infos)
        _check_bound(ws.root, entries, replace)
        steps = _plan(ws, entries, replace)
        _verify(archive, infos)
        _apply(archive, steps)
    explicit = [e for e in entries.values() if e.info is not None]
    dirs = sum(e.is_dir for e in explicit)
    return {"files": len(explicit) - dirs, "dirs": dirs}


def _check_bound(root: str, entries: dict[str, _Entry], replace: bool) -> None:
    """The workspace's bound (limits.MAX_WORKSPACE_*) on what /work would hold after."""
    count = len(entries)
    size = sum(e.info.file_size for e in entries.values() if e.info is not None and not e.is_dir)
    if not replace:  # what stays besides the archive
        for real, dirs, files in os.walk(root):
            rel = os.path.relpath(real, root)
            for name in dirs + files:
                path = name if rel == "." else f"{rel}/{name}"
                if path in entries:
                    continue
                count += 1
                if name in files:
                    size += os.lstat(os.path.join(real, name)).st_size
    if count > limits.MAX_WORKSPACE_ENTRIES or size > limits.MAX_WORKSPACE_BYTES:
        raise FsError("ENOSPC", f"after the import /work would hold {count:,} files and "
                      f"directories and {size:,} bytes; the workspace's limit is "
                      f"{limits.MAX_WORKSPACE_ENTRIES:,} and {limits.MAX_WORKSPACE_BYTES:,} "
                      "bytes; nothing was imported")


def _entries(ws: Workspace, infos: list[zipfile.ZipInfo]) -> dict[str, _Entry]:
    """Every path the archive makes (parents included), checked to form one tree."""
    if len(infos) > MAX_ENTRIES:
        raise FsError("EFBIG", f"the archive has {len(infos):,} entries; the limit is "
                      f"{MAX_ENTRIES:,}")
    total = sum(info.file_size for info in infos)
    if total > MAX_TOTAL_BYTES:
        raise FsError("EFBIG", f"the archive unpacks to {total:,} bytes; the limit is "
                      f"{MAX_TOTAL_BYTES:,}")
    tree: dict[str, _Entry] = {}
    for info in infos:
        rel, is_dir = _entry_path(ws, info)
        if not rel:
            continue  # "./": the workspace itself
        _add(tree, _Entry(rel, is_dir, info, info.filename))
        parent = rel.rpartition("/")[0]
        while parent and _add(tree, _Entry(parent, True, None, info.filename)):
            parent = parent.rpartition("/")[0]  # stops where an earlier entry went already
    return tree


def _entry_path(ws: Workspace, info: zipfile.ZipInfo) -> tuple[str, bool]:
    """Where an entry goes (relative to /work; "" for /work itself), and if it is a dir."""
    name = info.filename
    if info.create_system == _MSDOS:
        name = name.replace("\\", "/")  # such names cannot hold a literal "\"
    shown = shorten(repr(info.filename))
    if name.startswith("/") or ".." in name.split("/"):
        raise FsError("EACCES", f"the archive entry {shown} points outside the workspace")
    if stat.S_ISLNK(info.external_attr >> 16):
        raise FsError("EINVAL", f"the archive entry {shown} is a symlink; the workspace "
                      "has none")
    is_dir = name.endswith("/")
    rel = ws.resolve(f"{MOUNT}/{name}").shown[len(MOUNT) + 1 :]
    if not rel and not is_dir:
        raise FsError("EINVAL", f"the archive entry {shown} is a file without a name")
    return rel, is_dir


def _add(tree: dict[str, _Entry], new: _Entry) -> bool:
    """Put ``new`` in ``tree``; False if a directory was there already (explicit or
    implied). The same name twice, or a name both file and directory, is refused:
    which one would win depends on the archiver, so neither does."""
    old = tree.get(new.rel)
    if old is None:
        tree[new.rel] = new
        return True
    if old.is_dir and new.is_dir and (old.info is None or new.info is None):
        if new.info is not None:
            tree[new.rel] = new
        return False
    if old.is_dir == new.is_dir:
        why = f"has {old.source!r} twice"
    else:
        why = (f"has '{new.rel}' both as a file and as a directory ({old.source!r} and "
               f"{new.source!r})")
    raise FsError("EINVAL", f"the archive {why}; nothing was imported")


def _plan(ws: Workspace, tree: dict[str, _Entry], replace: bool) -> list[_Step]:
    """The changes, in order: with ``replace``, first remove (deepest first) what the
    archive does not have with the same type; then make the archive's paths (parents
    first). Without ``replace``, a path whose type differs is refused."""
    found = dict(_scan(ws.root)) if replace else {rel: _kind(ws, rel) for rel in tree}
    steps: list[_Step] = []
    if replace:
        stale = [rel for rel, kind in found.items() if _kind_of(tree.get(rel)) != kind]
        for rel in sorted(stale, reverse=True):
            if found[rel] == "other":
                raise FsError("EINVAL", f"/work/{shorten(rel)} is a special file; remove it "
                              "first (nothing was imported)")
            steps.append(_Step("remove", rel, os.path.join(ws.root, rel)))
            del found[rel]
    for rel in sorted(tree):
        entry, there = tree[rel], found.get(rel)
        if there is not None and there != _kind_of(entry):
            want = "directory" if entry.is_dir else "file"
            raise FsError("EINVAL", f"the archive entry {entry.source!r} needs a {want} at "
                          f"/work/{shorten(rel)}, where there is a {_KIND_NAMES[there]}; "
                          "import with replace, or remove it first")
        if not entry.is_dir:
            steps.append(_Step("write", rel, os.path.join(ws.root, rel), entry.info))
        elif there is None:
            steps.append(_Step("mkdir", rel, os.path.join(ws.root, rel)))
    return steps


_KIND_NAMES = {"file": "file", "dir": "directory", "link": "symlink", "other": "special file"}


def _kind_of(entry: _Entry | None) -> str | None:
    return None if entry is None else "dir" if entry.is_dir else "file"


def _kind(ws: Workspace, rel: str) -> str | None:
    try:
        return _mode_kind(os.lstat(os.path.join(ws.root, rel)).st_mode)
    except (FileNotFoundError, NotADirectoryError):  # below a file: refused at the file
        return None


def _mode_kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "other"


def _verify(archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]) -> None:
    """Read every entry once: zipfile checks the CRC at the end of a read."""
    for info in infos:
        try:
            with archive.open(info) as src:
                _copy_bounded(src, None, info)
        except (FsError, MemoryError):
            raise
        except Exception as exc:  # the bytes are in memory: any other error is the archive's
            raise FsError("EINVAL", f"the archive entry {shorten(repr(info.filename))} is "
                          f"damaged ({type(exc).__name__}: {exc}); nothing was imported") from None


def _copy_bounded(src: IO[bytes], dst: IO[bytes] | None, info: zipfile.ZipInfo) -> None:
    written = 0
    while chunk := src.read(_CHUNK):
        written += len(chunk)
        if written > info.file_size:  # the directory lied about the size
            raise FsError("EFBIG", f"the archive entry {shorten(repr(info.filename))} is "
                          "larger than its declared size")
        if dst is not None:
            dst.write(chunk)


# --- import: change, or change nothing ------------------------------------------------


@dataclass(frozen=True)
class _Was:
    """What was at a path before a step changed it (``kind`` None: nothing)."""

    kind: str | None
    data: bytes = b""
    mode: int = 0
    times_ns: tuple[int, int] = (0, 0)
    target: str = ""


def _apply(archive: zipfile.ZipFile, steps: list[_Step]) -> None:
    """Do ``steps``; on any exception put back every path changed, then raise."""
    undo: list[tuple[_Step, _Was]] = []
    step: _Step | None = None
    try:
        for step in steps:
            undo.append((step, _remember(step.real)))  # before the change, which may half happen
            _do(archive, step)
    except BaseException as exc:
        failed = _roll_back(undo)
        if not isinstance(exc, Exception):
            raise  # KeyboardInterrupt (a cancel): undone, and passed on as it is
        assert step is not None
        raise _failure(exc, step, failed) from None


def _do(archive: zipfile.ZipFile, step: _Step) -> None:
    """One change to the workspace (the seam the tests break, at every position)."""
    if step.op == "remove":
        if _mode_kind(os.lstat(step.real).st_mode) == "dir":
            os.rmdir(step.real)  # empty by now: its contents came earlier
        else:
            os.unlink(step.real)
    elif step.op == "mkdir":
        os.mkdir(step.real)
    else:
        assert step.info is not None
        with archive.open(step.info) as src, open(step.real, "wb") as dst:
            _copy_bounded(src, dst, step.info)


def _remember(real: str) -> _Was:
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return _Was(None)
    kind, mode = _mode_kind(st.st_mode), stat.S_IMODE(st.st_mode)
    if kind == "file":
        with open(real, "rb") as f:
            return _Was(kind, f.read(), mode, (st.st_atime_ns, st.st_mtime_ns))
    if kind == "link":
        return _Was(kind, target=os.readlink(real))
    return _Was(kind, mode=mode)


def _roll_back(undo: list[tuple[_Step, _Was]]) -> list[str]:
    """Put every path back, last change first; returns the paths that could not be."""
    failed = []
    for step, was in reversed(undo):
        try:
            _put_back(step.real, was)
        except OSError:
            failed.append(f"/work/{shorten(step.rel)}")
    return failed


def _put_back(real: str, was: _Was) -> None:
    try:
        now: str | None = _mode_kind(os.lstat(real).st_mode)
    except FileNotFoundError:
        now = None
    if now == "dir" and was.kind == "dir":
        os.chmod(real, was.mode)
        return
    if now == "dir":
        os.rmdir(real)  # made by the import; what it put inside is gone already
    elif now is not None:
        os.unlink(real)
    if was.kind == "dir":
        os.mkdir(real)
        os.chmod(real, was.mode)
    elif was.kind == "link":
        os.symlink(was.target, real)
    elif was.kind == "file":
        with open(real, "xb") as f:
            f.write(was.data)
        os.chmod(real, was.mode)
        os.utime(real, ns=was.times_ns)


def _failure(exc: Exception, step: _Step, failed: list[str]) -> FsError:
    shown = f"/work/{shorten(step.rel)}"
    if isinstance(exc, FsError):
        err = exc
    elif isinstance(exc, OSError):
        err = FsError.from_os_error(exc, shown)
    else:
        err = FsError("EIO", f"{type(exc).__name__} while importing '{shown}': {exc}")
    if failed:
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return FsError(err.code, f"{err.message}; undoing the import failed too, at "
                       f"{', '.join(failed[:3])}{more}")
    return FsError(err.code, f"{err.message}; the import was undone, /work is as before")


def _scan(root: str) -> list[tuple[str, str]]:
    """Every path below ``root`` (relative, "/"-separated) and its kind, sorted; links
    are not followed. Iterative: the depth is bounded by the jail, not the stack."""
    out = []
    todo = [(root, "")]
    while todo:
        real, prefix = todo.pop()
        with os.scandir(real) as entries:
            for entry in entries:
                rel = prefix + entry.name
                kind = _mode_kind(entry.stat(follow_symlinks=False).st_mode)
                out.append((rel, kind))
                if kind == "dir":
                    todo.append((entry.path, rel + "/"))
    return sorted(out)
