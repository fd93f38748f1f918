"""What the workspace modules share about paths: ``/work`` and where it really is, the
folders above a path, and removing a tree.

:meth:`~harness.workspace.jail.Workspace.resolve` is for a path someone gave (the model,
the page, the sandbox); :func:`real_path` only for a path the workspace itself recorded
(the journal's, a checkpoint's), already in its ``/work/...`` form.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

MOUNT = "/work"


def real_path(root: str, path: str) -> str:
    """Where the recorded workspace path ``path`` (``/work`` or below) is under ``root``."""
    if path != MOUNT and not path.startswith(f"{MOUNT}/"):
        raise ValueError(f"not a workspace path: {path!r}")
    return root + path[len(MOUNT):]


def shown_path(root: str, real: str) -> str:
    """The workspace path of ``real``, a path at or below ``root``."""
    return MOUNT + real[len(root):]


def below(path: str, top: str) -> bool:
    """Whether ``path`` is strictly below the folder ``top``."""
    return path.startswith(f"{top}/")


def ancestors(path: str) -> Iterator[str]:
    """``/work/a/b/c`` → ``/work/a/b``, ``/work/a`` (not ``/work`` itself)."""
    while True:
        path = path.rpartition("/")[0]
        if not below(path, MOUNT):
            return
        yield path


def remove(real: str) -> None:
    """Remove a file, a symbolic link (never followed) or a folder with all below it;
    ``FileNotFoundError`` if there is nothing."""
    if os.path.isdir(real) and not os.path.islink(real):
        rmtree(real)
    else:
        os.unlink(real)


def rmtree(top: str) -> None:
    """Remove a directory tree without recursion (``shutil.rmtree`` recurses once per
    level before Python 3.14); symbolic links are removed, never followed."""
    directories: list[str] = []
    pending = [top]
    while pending:
        directory = pending.pop()
        directories.append(directory)
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                else:
                    os.unlink(entry.path)
    for directory in reversed(directories):  # children were found after their parents
        os.rmdir(directory)
