"""Filesystem operations behind ``h.fs``, over the jailed workspace.

Each operation takes workspace paths, raises :class:`FsError` with a POSIX code, and
returns plain JSON-able data (or ``bytes`` for ``readFile``). :func:`dispatch` is the
validated entry point for requests that crossed the worker boundary.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat as stat_mod
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .errors import FsError
from .jail import Resolved, Workspace

EntryType = Literal["file", "dir", "symlink", "other"]


@contextmanager
def os_errors(shown: str) -> Iterator[None]:
    try:
        yield
    except FsError:
        raise
    except OSError as exc:
        raise FsError.from_os_error(exc, shown) from None


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
    with os_errors(p.shown):
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


def write_file(ws: Workspace, path: str, data: bytes, append: bool = False) -> None:
    """Write (or append) ``data``. A plain write goes to a temporary file first and
    replaces the target in one step, so a failed write never leaves half a file."""
    p = ws.resolve(path)
    with os_errors(p.shown):
        if os.path.isdir(p.real):
            raise FsError("EISDIR", f"illegal operation on a directory, open '{p.shown}'")
        parent = os.path.dirname(p.real)
        if not os.path.isdir(parent):
            kind = "ENOTDIR" if os.path.exists(parent) else "ENOENT"
            reason = "not a directory" if kind == "ENOTDIR" else "no such file or directory"
            raise FsError(kind, f"{reason}, open '{p.shown}'")
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
    with os_errors(p.shown), os.scandir(p.real) as it:
        entries = [{"name": e.name, "type": _type_of(e.stat(follow_symlinks=False).st_mode)}
                   for e in it]
    return sorted(entries, key=lambda e: e["name"])


def stat(ws: Workspace, path: str) -> dict[str, Any]:
    p = ws.resolve(path)
    with os_errors(p.shown):
        st = os.lstat(p.real)
    return {
        "type": _type_of(st.st_mode),
        "size": st.st_size,
        "mtime": st.st_mtime * 1000.0,
        "mode": stat_mod.S_IMODE(st.st_mode),
    }


def mkdir(ws: Workspace, path: str, recursive: bool = False) -> None:
    p = ws.resolve(path)
    with os_errors(p.shown):
        if recursive:
            if os.path.isdir(p.real):
                return
            os.makedirs(p.real)
        else:
            os.mkdir(p.real)


def rm(ws: Workspace, path: str, recursive: bool = False, force: bool = False) -> None:
    p = ws.resolve(path)
    _refuse_root(p, "remove")
    with os_errors(p.shown):
        try:
            st = os.lstat(p.real)
        except FileNotFoundError:
            if force:
                return
            raise
        if not stat_mod.S_ISDIR(st.st_mode):
            os.unlink(p.real)
        elif recursive:
            shutil.rmtree(p.real)
        else:
            raise FsError("EISDIR", f"is a directory (pass recursive: true), rm '{p.shown}'")


def rename(ws: Workspace, src: str, dst: str) -> None:
    a, b = ws.resolve(src), ws.resolve(dst)
    _refuse_root(a, "rename")
    _refuse_root(b, "replace")
    with os_errors(a.shown):
        os.lstat(a.real)
    with os_errors(b.shown):
        if os.path.isdir(a.real) and (b.shown + "/").startswith(a.shown + "/"):
            raise FsError("EINVAL", f"cannot move '{a.shown}' into itself, '{b.shown}'")
        os.rename(a.real, b.real)


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


FsRequest = Annotated[
    ReadFileReq | WriteFileReq | ReaddirReq | StatReq | MkdirReq | RmReq | RenameReq,
    Field(discriminator="op"),
]
OPS = ("readFile", "writeFile", "readdir", "stat", "mkdir", "rm", "rename")


def parse_request(args_json: str | bytes) -> FsRequest:
    """Validate a request (``{"op": ..., ...}`` as JSON); bad input is ``EINVAL``."""
    try:
        return _request_adapter().validate_json(args_json)
    except ValidationError as exc:
        raise FsError("EINVAL", _describe(exc)) from None


@functools.cache
def _request_adapter() -> TypeAdapter[FsRequest]:
    return TypeAdapter(FsRequest)


def _describe(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    if err["type"] == "union_tag_invalid":
        tag = err.get("input", {}).get("op") if isinstance(err.get("input"), dict) else None
        return f"unknown fs operation {tag!r}; expected one of {', '.join(OPS)}"
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
