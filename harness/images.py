"""Images for the model: what counts as one, its size and dimensions, and how many the
history keeps.

An image reaches the model two ways: attached to a prompt (``h.prompt(text,
{attachments})``, written to ``/work/attachments/`` first) and returned by ``read`` for
an image file, when the model takes images (``model.vision``, default by model name).
Both carry the image's workspace path, so an image the history no longer carries (past
:data:`MAX_IMAGES_KEPT`, or compacted away) leaves a placeholder naming its file.
"""

from __future__ import annotations

import base64
import struct

from .messages import Image, Message, ToolResult, UserMessage

MIB = 1024 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * MIB  # one image (the Anthropic API's own limit)
MAX_IMAGES_KEPT = 20  # in the history; older ones become placeholders
IMAGE_TOKENS = 1600  # what one image counts for in the compaction's estimate

# Models that take image input, by name (like the context windows of compaction.py);
# `model.vision` says it for any other.
_VISION_PREFIXES = ("gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "claude-",
                    "gemini", "llava", "qwen2.5-vl", "qwen-vl", "pixtral", "mistral-medium",
                    "mistral-small", "grok-4", "llama-4")


def default_vision(model_name: str) -> bool:
    """Whether a model of this name takes images, when the page did not say."""
    name = model_name.lower().rsplit("/", 1)[-1]
    return name.startswith(_VISION_PREFIXES)


def sniff(data: bytes) -> str | None:
    """The image type of these bytes by their signature, or None."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes, media_type: str) -> tuple[int, int] | None:
    """Width and height from the image's header, or None when it cannot say."""
    try:
        if media_type == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if media_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if media_type == "image/webp":
            return _webp_size(data)
        if media_type == "image/jpeg":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = int.from_bytes(data[at + 2:at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return int(width), int(height)
        at += 2 + length
    return None


def describe(path: str, data: bytes, media_type: str) -> str:
    """One line about an image file: its path, type, size and dimensions."""
    size = dimensions(data, media_type)
    shown = f", {size[0]}x{size[1]}" if size else ""
    return f"{path}: {media_type}, {len(data):,} bytes{shown}"


def image(path: str, data: bytes, media_type: str) -> Image:
    return Image(path=path, media_type=media_type, data=base64.b64encode(data).decode("ascii"))


def placeholder(img: Image) -> str:
    if img.path.startswith("("):  # a tool's image (an MCP result): there is no file
        return f"[image {img.path}: no longer shown]"
    return f"[image {img.path}: no longer shown; read the file to see it again]"


def bound_images(history: list[Message], keep: int = MAX_IMAGES_KEPT) -> int:
    """Keep the newest ``keep`` images of the history; each older one becomes a line of
    text naming its file. Returns how many were dropped."""
    seen = 0
    dropped = 0
    for i in range(len(history) - 1, -1, -1):
        m = history[i]
        if not isinstance(m, UserMessage | ToolResult) or not m.images:
            continue
        kept = []
        gone = []
        for img in reversed(m.images):
            if seen < keep:
                kept.append(img)
                seen += 1
            else:
                gone.append(img)
        if gone:
            dropped += len(gone)
            note = "\n".join(placeholder(g) for g in reversed(gone))
            if isinstance(m, UserMessage):
                history[i] = UserMessage(text=f"{m.text}\n{note}".strip(), images=kept[::-1])
            else:
                history[i] = m.model_copy(update={"output": f"{m.output}\n{note}".strip(),
                                                  "images": kept[::-1]})
    return dropped
