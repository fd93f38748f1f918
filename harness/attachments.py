"""A prompt's attachments, as the model gets them: the page wrote each file to
``/work/attachments/`` (embed/page/attachments.mjs, which checked its type and size);
here every one is named in the prompt's text, and the images are read back, through the
jail, to go to the model as images (harness/images.py). Each file's SHA-256, taken now
(before the model has run), goes with the run_start event into the thread (/state, out
of the model's reach): the widget redraws an attachment after a reload only while the
file still matches it, since the model can rewrite /work/attachments/."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

from .errors import FsError
from .images import IMAGE_TYPES, MAX_IMAGE_BYTES, describe, image, sniff
from .messages import Image
from .workspace.jail import Workspace

MAX_ATTACHMENTS = 10  # as on the page
MAX_HASHED_BYTES = 32 * 1024 * 1024  # past the page's own limits (20 MiB a file)


@dataclass(frozen=True)
class Attached:
    """A prompt's attachments: the lines that name them for the model, the images it is
    shown, and each file as the run_start event tells it ({path, type, size})."""

    note: str = ""
    images: list[Image] = field(default_factory=list)
    refs: list[dict[str, str | int | None]] = field(default_factory=list)


def read_attachments(workspace: Workspace, attachments_json: str) -> Attached:
    """What the page attached, read back (an image whose file is not one, or too large,
    is named but not shown; a path outside the workspace or gone is named missing)."""
    try:
        listed = json.loads(attachments_json or "[]")
    except ValueError:
        listed = []
    if not isinstance(listed, list):
        listed = []
    lines: list[str] = []
    images: list[Image] = []
    refs: list[dict[str, str | int | None]] = []
    for entry in listed[:MAX_ATTACHMENTS]:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            continue
        try:
            p = workspace.resolve(entry["path"])
            with open(p.real, "rb") as f:
                data: bytes | None = f.read(MAX_IMAGE_BYTES + 1)
        except (FsError, OSError):
            data = None
        if data is None:
            lines.append(f"- {entry['path']}: (missing)")
            continue
        kind = sniff(data)
        size = os.path.getsize(p.real)
        digest = _sha256(p.real)
        if kind is not None and kind in IMAGE_TYPES and len(data) <= MAX_IMAGE_BYTES:
            images.append(image(p.shown, data, kind))
            lines.append(f"- {describe(p.shown, data, kind)} (shown)")
            refs.append({"path": p.shown, "media_type": kind, "size": size, "sha256": digest})
        else:
            shown_type = str(entry.get("type") or "application/octet-stream")[:100]
            lines.append(f"- {p.shown}: {shown_type}, {size:,} bytes")
            refs.append({"path": p.shown, "media_type": shown_type, "size": size,
                         "sha256": digest})
    if not lines:
        return Attached()
    return Attached("\n\nAttached (in the workspace):\n" + "\n".join(lines), images, refs)


def _sha256(real: str) -> str | None:
    """The file's SHA-256 in hex (None past MAX_HASHED_BYTES or unreadable)."""
    digest = hashlib.sha256()
    seen = 0
    try:
        with open(real, "rb") as f:
            while chunk := f.read(1024 * 1024):
                seen += len(chunk)
                if seen > MAX_HASHED_BYTES:
                    return None
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()
