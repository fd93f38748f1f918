"""Filesystem operations behind ``h.fs``, over the jailed workspace.

Each operation takes workspace paths, raises :class:`FsError` with a POSIX code, and
returns plain JSON-able data (or ``bytes`` for ``readFile``). :func:`dispatch` is the
validated entry point for requests that crossed the worker boundary.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import stat as stat_mod
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ..errors import FsError
from ..limits import (
    MAX_FS_REQUEST_CHARS,
    MAX_JSON_DEPTH,
    clean_text,
    json_depth,
    loads_bounded,
    shorten,
)
from . import archive
from .jail import Resolved, Workspace
from .paths import rmtree

EntryType = Literal["file", "dir", "symlink", "other"]


@contextmanager
def os_errors(shown: str, real: str | None = None) -> Iterator[None]:
    """Turn an ``OSError`` into an ``FsError`` naming ``shown``. With ``real``, an
    ``ENOENT`` is checked against Linux's rule: a path through a regular file is
    ``ENOTDIR`` (some filesystems, Emscripten's among them, say ``ENOENT``)."""
    try:
        yield
    except FsError:
        raise
    except OSError as exc:
        error = FsError.from_os_error(exc, shown)
        if real is not None and error.code == "ENOENT" and _through_a_file(real):
            error = FsError("ENOTDIR", f"not a directory, '{shown}'")
        raise error from None


def _through_a_file(real: str) -> bool:
    """Whether the first ancestor of ``real`` that is not a directory exists (a file):
    then Linux answers ENOTDIR, else ENOENT."""
    parts = real.split(os.sep)
    for end in range(2, len(parts)):
        try:
            st = os.stat(os.sep.join(parts[:end]) or os.sep)
        except OSError:
            return False
        if not stat_mod.S_ISDIR(st.st_mode):
            return True
    return False


def _type_of(mode: int) -> EntryType:
    if stat_mod.S_ISREG(mode):
        return "file"
    if stat_mod.S_ISDIR(mode):
        return "dir"
    if stat_mod.S_ISLNK(mode):
        return "symlink"
    return "other"


def read_file(ws: Workspace, path: str) -> bytes:
    p = ws.resolve(path)
    # os.open/fstat/read, not open(): the hot path of h.fs, and io's layers cost more
    # than the read itself for small files.
    with os_errors(p.shown, p.real):
        fd = os.open(p.real, os.O_RDONLY)
        try:
            st = os.fstat(fd)
            if stat_mod.S_ISDIR(st.st_mode):
                raise FsError("EISDIR", f"illegal operation on a directory, read '{p.shown}'")
            data = os.read(fd, st.st_size)
            if len(data) < st.st_size or st.st_size == 0:  # short read, or no size known
                rest = iter(lambda: os.read(fd, 1 << 20), b"")
                data = b"".join([data, *rest])
            return data
        finally:
            os.close(fd)


def readable_path(ws: Workspace, path: object) -> str | None:
    """Where the workspace file ``path`` really is, for a reader outside Python, or None
    when the jail refuses it. The worker reads a ``readFile``'s bytes with its
    filesystem's own ``readFile`` (one copy, straight into a transferable buffer, instead
    of into Python and out again); when that read fails, or None comes back, the whole
    request goes through :func:`parse_request` and :func:`read_file`, whose error is the
    answer. The jail decision stays here."""
    try:
        return ws.resolve(path).real
    except FsError:
        return None


def writable_path(ws: Workspace, path: object) -> str | None:
    """Where a ``writeFile`` of ``path`` goes, for a writer outside Python, or None when
    anything would make :func:`write_file` refuse it (the jail, a directory there, no
    parent directory). The worker then writes the page's transferred bytes with its
    filesystem's own ``writeFile``, which takes the buffer over instead of copying it
    into Python and out again; on None the request takes the full path, whose error is
    the answer. The jail decision stays here."""
    try:
        # as parse_request does: a lone surrogate (a JS string can hold one) is U+FFFD
        p = ws.resolve(clean_text(path) if isinstance(path, str) else path)
    except FsError:
        return None
    if p.is_root or os.path.isdir(p.real) or not os.path.isdir(os.path.dirname(p.real)):
        return None
    return p.real


def write_file(ws: Workspace, path: str, data: bytes, append: bool = False) -> None:
    """Write (or append) ``data``. A plain write goes to a temporary file first and
    replaces the target in one step, so a failed write never leaves half a file."""
    p = ws.resolve(path)
    with os_errors(p.shown, p.real):
        if os.path.isdir(p.real):
            raise FsError("EISDIR", f"illegal operation on a directory, open '{p.shown}'")
        _check_parent(p, "open")
        parent = os.path.dirname(p.real)
        if append:
            with open(p.real, "ab") as f:
                f.write(data)
            return
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=".pyharness-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            mode = os.stat(p.real).st_mode & 0o7777 if os.path.exists(p.real) else 0o644
            os.chmod(tmp, mode)
            os.replace(tmp, p.real)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def readdir(ws: Workspace, path: str) -> list[dict[str, str]]:
    p = ws.resolve(path)
    with os_errors(p.shown, p.real), os.scandir(p.real) as it:
        # A name that is not valid UTF-8 (made by other means) is shown with U+FFFD.
        entries = [{"name": clean_text(e.name),
                    "type": _type_of(e.stat(follow_symlinks=False).st_mode)} for e in it]
    return sorted(entries, key=lambda e: e["name"])


def stat(ws: Workspace, path: str) -> dict[str, Any]:
    p = ws.resolve(path)
    with os_errors(p.shown, p.real):
        st = os.lstat(p.real)
    return {
        "type": _type_of(st.st_mode),
        "size": st.st_size,
        "mtime": st.st_mtime * 1000.0,
        "mode": stat_mod.S_IMODE(st.st_mode),
    }


def mkdir(ws: Workspace, path: str, recursive: bool = False) -> None:
    p = ws.resolve(path)
    with os_errors(p.shown, p.real):
        if recursive:
            makedirs(p.real)
        else:
            os.mkdir(p.real)


def makedirs(real: str) -> None:
    """``mkdir -p``, without recursion (``os.makedirs`` recurses once per level): an
    existing directory is fine, an existing file is ``EEXIST``, one on the way ``ENOTDIR``."""
    missing: list[str] = []
    current = real
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if directory == real:
                raise
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory") from None


def rm(ws: Workspace, path: str, recursive: bool = False, force: bool = False) -> None:
    """Remove a file, an empty directory, or (``recursive``) a tree; ``force`` ignores a
    missing path, and (as ``rm -f``) a path through a file, which cannot exist either.
    A non-empty directory without ``recursive`` is ``ENOTEMPTY``."""
    p = ws.resolve(path)
    _refuse_root(p, "remove")
    with os_errors(p.shown, p.real):
        try:
            st = os.lstat(p.real)
        except (FileNotFoundError, NotADirectoryError):  # lstat's ENOTDIR: a file on the way
            if force:
                return
            raise
        if not stat_mod.S_ISDIR(st.st_mode):
            os.unlink(p.real)
        elif recursive:
            rmtree(p.real)
        else:
            os.rmdir(p.real)


def rename(ws: Workspace, src: str, dst: str) -> None:
    """rename(2), checked in Linux's order: both parents, then the source, then the
    move itself (so the same mistake gets the same code on every filesystem)."""
    a, b = ws.resolve(src), ws.resolve(dst)
    _refuse_root(a, "rename")
    _refuse_root(b, "replace")
    for p in (a, b):
        _check_parent(p, "rename")
    with os_errors(a.shown, a.real):
        os.lstat(a.real)
    with os_errors(b.shown, b.real):
        if a.shown == b.shown:
            return  # as rename(2): the same file, nothing to do
        if os.path.isdir(a.real) and (b.shown + "/").startswith(a.shown + "/"):
            raise FsError("EINVAL", f"cannot move '{a.shown}' into itself, '{b.shown}'")
        os.rename(a.real, b.real)


def _check_parent(p: Resolved, verb: str) -> None:
    """ENOENT or ENOTDIR (as Linux chooses) when the parent of ``p`` is not a directory."""
    if os.path.isdir(os.path.dirname(p.real)):
        return
    if _through_a_file(p.real):
        raise FsError("ENOTDIR", f"not a directory, {verb} '{p.shown}'")
    raise FsError("ENOENT", f"no such file or directory, {verb} '{p.shown}'")


def _refuse_root(p: Resolved, verb: str) -> None:
    if p.is_root:
        raise FsError("EPERM",
                      f"operation not permitted, cannot {verb} the workspace root '{p.shown}'")


# ---------------------------------------------------------------------------
# Requests that crossed the worker boundary


class _Req(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ReadFileReq(_Req):
    op: Literal["readFile"]
    path: str


class WriteFileReq(_Req):
    op: Literal["writeFile"]
    path: str
    append: bool = False


class ReaddirReq(_Req):
    op: Literal["readdir"]
    path: str


class StatReq(_Req):
    op: Literal["stat"]
    path: str


class MkdirReq(_Req):
    op: Literal["mkdir"]
    path: str
    recursive: bool = False


class RmReq(_Req):
    op: Literal["rm"]
    path: str
    recursive: bool = False
    force: bool = False


class RenameReq(_Req):
    op: Literal["rename"]
    from_: str = Field(alias="from")
    to: str


class ExportZipReq(_Req):
    op: Literal["exportZip"]


class ImportZipReq(_Req):
    op: Literal["importZip"]
    replace: bool = False


FsRequest = Annotated[
    ReadFileReq | WriteFileReq | ReaddirReq | StatReq | MkdirReq | RmReq | RenameReq
    | ExportZipReq | ImportZipReq,
    Field(discriminator="op"),
]
OPS = ("readFile", "writeFile", "readdir", "stat", "mkdir", "rm", "rename", "exportZip",
       "importZip")


def parse_request(args_json: str | bytes) -> FsRequest:
    """Validate a request (``{"op": ..., ...}`` as JSON); bad input is ``EINVAL``.

    Size and nesting are checked on the text first, and lone surrogates (a JS string
    can hold them) become U+FFFD, so paths are always valid UTF-8."""
    if isinstance(args_json, bytes | bytearray):
        args_json = bytes(args_json).decode("utf-8", "replace")
    if not isinstance(args_json, str):
        raise FsError("EINVAL", f"an fs request must be JSON text, got {type(args_json).__name__}")
    if len(args_json) > MAX_FS_REQUEST_CHARS:
        raise FsError("EINVAL", f"the fs request is {len(args_json):,} characters; the limit "
                      f"is {MAX_FS_REQUEST_CHARS:,} (file data travels as bytes, not in it)")
    if len(args_json) > 2 * MAX_JSON_DEPTH and json_depth(args_json) > MAX_JSON_DEPTH:
        raise FsError("EINVAL", f"the fs request is nested deeper than {MAX_JSON_DEPTH} levels")
    return _parse_common(args_json) or _parse_with_models(args_json)


def _parse_with_models(args_json: str) -> FsRequest:
    """Any request, by the pydantic models (their messages say what is wrong)."""
    try:  # pydantic parses and validates in one step
        return _request_adapter().validate_json(clean_text(args_json))
    except ValidationError as exc:
        if exc.errors(include_url=False)[0]["type"] != "json_invalid":
            raise FsError("EINVAL", _describe(exc)) from None
    try:
        # pydantic's parser refuses a "\ud800" escape, which JSON.stringify writes for a
        # lone surrogate: json.loads takes it, and loads_bounded replaces it.
        value = loads_bounded(args_json, "the fs request", MAX_FS_REQUEST_CHARS)
    except ValueError as exc:
        raise FsError("EINVAL", f"invalid argument 'request': not valid JSON ({exc})") from None
    try:
        return _request_adapter().validate_python(value)
    except ValidationError as exc:
        raise FsError("EINVAL", _describe(exc)) from None


# The requests of h.fs's hot path: op → (model, its boolean flags). Each has a string
# "path" and nothing else.
_COMMON: dict[str, tuple[type[_Req], frozenset[str]]] = {
    "readFile": (ReadFileReq, frozenset()),
    "writeFile": (WriteFileReq, frozenset({"append"})),
    "stat": (StatReq, frozenset()),
    "readdir": (ReaddirReq, frozenset()),
    "mkdir": (MkdirReq, frozenset({"recursive"})),
    "rm": (RmReq, frozenset({"recursive", "force"})),
}


def _parse_common(args_json: str) -> FsRequest | None:
    """A well-formed common request, checked by hand exactly as the models would (strict
    types, no other keys), or None: then pydantic parses it and explains what is wrong.

    Measured in the worker, pydantic's ``validate_json`` costs about 50 µs of a 1 KB
    ``readFile`` when it runs once per message (its code is cold each time); the C
    ``json`` parser and these checks, a fraction of it."""
    try:
        value = json.loads(args_json)
    except (ValueError, RecursionError):
        return None
    if type(value) is not dict:
        return None
    op, path = value.get("op"), value.get("path")
    if type(op) is not str or op not in _COMMON or type(path) is not str:
        return None
    model, flags = _COMMON[op]
    for key, flag in value.items():
        if key not in ("op", "path") and (key not in flags or type(flag) is not bool):
            return None
    value["path"] = clean_text(path)
    return model.model_construct(**value)  # type: ignore[return-value]


@functools.cache
def _request_adapter() -> TypeAdapter[FsRequest]:
    return TypeAdapter(FsRequest)


def _describe(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    if err["type"] == "union_tag_invalid":
        tag = err.get("input", {}).get("op") if isinstance(err.get("input"), dict) else None
        return f"unknown fs operation {shorten(repr(tag))}; expected one of {', '.join(OPS)}"
    if err["type"] == "union_tag_not_found":
        return f"missing 'op'; expected one of {', '.join(OPS)}"
    where = ".".join(str(part) for part in err["loc"][1:]) or "request"
    return f"invalid argument '{where}': {err['msg']}"


def dispatch(ws: Workspace, req: FsRequest, data: bytes | None = None) -> Any:
    """Run one validated request. ``data`` carries the bytes of ``writeFile``."""
    match req:
        case ReadFileReq():
            return read_file(ws, req.path)
        case WriteFileReq():
            if data is None:
                raise FsError("EINVAL", "writeFile needs data (a string or bytes)")
            return write_file(ws, req.path, data, req.append)
        case ReaddirReq():
            return readdir(ws, req.path)
        case StatReq():
            return stat(ws, req.path)
        case MkdirReq():
            return mkdir(ws, req.path, req.recursive)
        case RmReq():
            return rm(ws, req.path, req.recursive, req.force)
        case RenameReq():
            return rename(ws, req.from_, req.to)
        case ExportZipReq():
            return archive.export_zip(ws)
        case ImportZipReq():
            if data is None:
                raise FsError("EINVAL", "importZip needs the archive's bytes")
            return archive.import_zip(ws, data, req.replace)
