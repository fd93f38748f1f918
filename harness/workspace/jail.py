"""The workspace jail: the one place where a path from the model or the page is resolved.

Every entry point (``h.fs``, the built-in tools, later the shell adapter) calls
:meth:`Workspace.resolve`. A path is accepted only if it names ``/work`` or something
below it, written either as ``/work/...`` or relative to ``/work``. Anything else,
``..`` escapes included, is ``EACCES``; the error never says whether the outside path
exists. Lone surrogates become U+FFFD, and a name over 255 bytes, a path of 4096
bytes or more or deeper than 256 levels is ``ENAMETOOLONG`` (see :mod:`harness.limits`), so
no path can reach code that recurses once per level.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import FsError
from ..limits import MAX_NAME_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH, clean_text, shorten
from .paths import MOUNT


@dataclass(frozen=True)
class Resolved:
    """A path inside the workspace: ``shown`` is what users see, ``real`` what ``os`` gets."""

    shown: str
    real: str

    @property
    def is_root(self) -> bool:
        return self.shown == MOUNT


class Workspace:
    """Maps workspace paths (``/work/...``) onto a real directory.

    In Pyodide the real directory *is* ``/work``; on CPython it is any directory (the
    tests use a temporary one), so the same code runs on both. ``extra_mounts`` adds
    other mount points with the same rules (the shell's view adds ``/tmp``); relative
    paths are always relative to ``/work``.
    """

    def __init__(self, root: str | os.PathLike[str],
                 extra_mounts: Mapping[str, str | os.PathLike[str]] | None = None) -> None:
        os.makedirs(root, exist_ok=True)
        self.root = os.path.realpath(root)
        self.mounts: dict[str, str] = {MOUNT: self.root}
        for point, directory in (extra_mounts or {}).items():
            os.makedirs(directory, exist_ok=True)
            self.mounts[point] = os.path.realpath(directory)
        self._link_free = False  # see trust_no_symlinks()

    def trust_no_symlinks(self) -> bool:
        """Stop checking each path with ``realpath`` (the jail's main cost on the hot path
        of ``h.fs``), if no symbolic link is under any mount now. True if trusted.

        Only for a caller that sees every change that could bring a symlink in, and calls
        :meth:`symlinks_possible` first: the harness worker hooks its filesystem's
        ``symlink``, ``rename`` from outside the workspace, and ``mount``
        (embed/worker/worker.mjs). Nothing in the harness makes symlinks, the sandbox's are
        dropped on the way back (harness/workspace/sandbox.py) and OPFS has none, so in practice
        the trust lasts the worker's life. Never used on CPython."""
        pending = list(self.mounts.values())
        while pending:
            with os.scandir(pending.pop()) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        self._link_free = False
                        return False
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
        self._link_free = True
        return True

    def symlinks_possible(self) -> None:
        """A symlink may exist under a mount from now on: check every path again."""
        self._link_free = False

    def resolve(self, path: object) -> Resolved:
        """Resolve ``path`` inside a mount or raise ``FsError`` (EINVAL/EACCES)."""
        shown = normalize(path, tuple(self.mounts))
        point = next(m for m in self.mounts if shown == m or shown.startswith(m + "/"))
        base = self.mounts[point]
        rel = shown[len(point) + 1 :]
        real = os.path.join(base, rel) if rel else base
        if self._link_free:  # no symlink anywhere below: real is where the path leads
            return Resolved(shown=shown, real=real)
        # A symlink planted inside the workspace (the harness never creates one) must
        # not lead outside it: check where the real path ends up.
        final = os.path.realpath(real)
        if final != base and not final.startswith(base + os.sep):
            raise FsError("EACCES", f"permission denied, '{shorten(shown)}' is outside the "
                          f"workspace {MOUNT}")
        return Resolved(shown=shown, real=real)

    def shown(self, real: str) -> str:
        """The workspace path of a real path below the root (for listings)."""
        rel = os.path.relpath(real, self.root)
        return MOUNT if rel == "." else f"{MOUNT}/{rel.replace(os.sep, '/')}"


def normalize(path: object, mounts: tuple[str, ...] = (MOUNT,)) -> str:
    """Return the absolute workspace form of ``path`` (``/work`` or ``/work/a/b``)."""
    if not isinstance(path, str):
        raise FsError("EINVAL", f"path must be a string, got {type(path).__name__}")
    if path == "":
        raise FsError("EINVAL", "path must not be empty")
    if "\x00" in path:
        raise FsError("EINVAL", "path must not contain NUL characters")
    path = clean_text(path)
    if len(path) >= MAX_PATH_BYTES or len(path.encode("utf-8")) >= MAX_PATH_BYTES:
        # As Linux does, on the path as given (before any work on it).
        raise _too_long(path, f"it is {len(path.encode('utf-8')):,} bytes; the limit is "
                        f"{MAX_PATH_BYTES - 1:,}")
    joined = path if path.startswith("/") else f"{MOUNT}/{path}"
    # normpath keeps a leading "//"; collapse it so "//work" means "/work".
    shown = posixpath.normpath("/" + joined.lstrip("/"))
    if not any(shown == m or shown.startswith(m + "/") for m in mounts):
        raise FsError("EACCES", f"permission denied, '{shorten(path)}' is outside the "
                      f"workspace {MOUNT}")
    _check_length(path, shown)
    return shown


def _check_length(path: str, shown: str) -> None:
    """Linux's limits (NAME_MAX per component, PATH_MAX in all), plus a depth limit."""
    size = len(shown.encode("utf-8"))
    if size >= MAX_PATH_BYTES:
        raise _too_long(path, f"it is {size:,} bytes; the limit is {MAX_PATH_BYTES - 1:,}")
    names = shown.split("/")[2:]
    if len(names) > MAX_PATH_DEPTH:
        raise _too_long(path, f"it is {len(names)} levels deep; the limit is {MAX_PATH_DEPTH}")
    for name in names:
        if len(name) * 4 > MAX_NAME_BYTES and len(name.encode("utf-8")) > MAX_NAME_BYTES:
            raise _too_long(path, f"a name in it is {len(name.encode('utf-8')):,} bytes; the "
                            f"limit is {MAX_NAME_BYTES} per name")


def _too_long(path: str, why: str) -> FsError:
    return FsError("ENAMETOOLONG", f"file name too long, '{shorten(path)}': {why}")
