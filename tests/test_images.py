"""Images for the model (harness/images.py, harness/attachments.py): what counts as one,
its dimensions, both wire formats, the read tool, the history's bound and compaction."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import struct
import zlib

from harness.attachments import Attached, read_attachments
from harness.compaction import _text_of, estimate
from harness.images import (
    MAX_IMAGE_BYTES,
    bound_images,
    default_vision,
    describe,
    dimensions,
    image,
    sniff,
)
from harness.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from harness.models import anthropic_messages, openai_chat
from harness.tools.base import ToolContext, ToolSet
from harness.tools.fileio import ReadTool
from harness.workspace.jail import Workspace


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PNG = png(3, 2)
GIF = b"GIF89a" + struct.pack("<HH", 7, 5) + b"\x00" * 20
JPEG = (b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + b"\x00" * 9
        + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 40, 30) + b"\x00" * 12)
WEBP = b"RIFF" + b"\x00" * 4 + b"WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little") \
    + (49).to_bytes(3, "little")


def test_what_an_image_is_and_its_size():
    assert [sniff(d) for d in (PNG, GIF, JPEG, WEBP, b"%PDF-1.7", b"")] == [
        "image/png", "image/gif", "image/jpeg", "image/webp", None, None]
    assert dimensions(PNG, "image/png") == (3, 2)
    assert dimensions(GIF, "image/gif") == (7, 5)
    assert dimensions(JPEG, "image/jpeg") == (30, 40)
    assert dimensions(WEBP, "image/webp") == (100, 50)
    assert dimensions(b"\x89PNG\r\n\x1a\n", "image/png") is None  # cut short: no answer
    about = describe("/work/a.png", PNG, "image/png")
    assert about == f"/work/a.png: image/png, {len(PNG)} bytes, 3x2"


def test_vision_by_model_name():
    assert default_vision("gpt-4.1-mini") and default_vision("claude-sonnet-4-5")
    assert default_vision("openrouter/openai/gpt-4o")
    assert not default_vision("gpt-3.5-turbo") and not default_vision("llama3")


def history_with_images():
    shot = image("/work/attachments/s.png", PNG, "image/png")
    return [UserMessage(text="like this", images=[shot]),
            AssistantMessage(tool_calls=[ToolCall(id="c1", name="read", arguments="{}")]),
            ToolResult(call_id="c1", name="read", output="dot.png: image/png",
                       images=[image("/work/dot.png", PNG, "image/png")])]


def test_openai_chat_sends_images_as_data_urls():
    wire = openai_chat.to_wire_messages("sys", history_with_images())
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "user"]
    user = wire[1]["content"]
    assert user[0] == {"type": "text", "text": "like this"}
    url = user[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url[22:]) == PNG
    assert wire[3]["content"] == "dot.png: image/png"  # a tool message holds text only
    assert wire[4]["content"][0]["text"].startswith("The images read (c1) returned")
    assert wire[4]["content"][1]["type"] == "image_url"


def test_anthropic_sends_image_blocks():
    wire = anthropic_messages.to_wire_messages(history_with_images())
    first = wire[0]["content"]
    assert first[0] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                    "data": base64.b64encode(PNG).decode()}}
    assert first[1] == {"type": "text", "text": "like this"}
    result = wire[2]["content"][0]
    assert result["type"] == "tool_result" and result["content"][1]["type"] == "image"


def test_the_history_keeps_the_newest_images():
    history = [UserMessage(text=f"p{i}", images=[image(f"/work/{i}.png", PNG, "image/png")])
               for i in range(5)]
    assert bound_images(history, keep=2) == 3
    assert [len(m.images) for m in history] == [0, 0, 0, 1, 1]
    assert history[0].text == ("p0\n[image /work/0.png: no longer shown; read the file to "
                               "see it again]")


def test_compaction_counts_and_names_images():
    history = history_with_images()
    text_only = [UserMessage(text="like this")]
    assert estimate("", history[:1], []) > estimate("", text_only, []) + 1000
    assert "[image /work/attachments/s.png" in _text_of(history[0])


def test_read_shows_an_image_only_to_a_model_that_takes_them(tmp_path):
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "big.png").write_bytes(PNG + b"\x00" * MAX_IMAGE_BYTES)
    tools = ToolSet([ReadTool()])
    ws = Workspace(str(tmp_path))

    def read(path, vision):
        return asyncio.run(tools.execute("read", {"path": path}, ToolContext(ws, vision=vision)))

    blind = read("dot.png", False)
    assert blind.images == () and "3x2" in blind.output and "not given images" in blind.output
    seeing = read("dot.png", True)
    assert not seeing.is_error and len(seeing.images) == 1
    shown = seeing.images[0]
    assert base64.b64decode(shown.data) == PNG and shown.media_type == "image/png"
    big = read("big.png", True)
    assert big.images == () and "Too large to show" in big.output


def test_attachments_are_named_and_images_read_back(tmp_path):
    (tmp_path / "attachments").mkdir()
    (tmp_path / "attachments" / "s.png").write_bytes(PNG)
    (tmp_path / "attachments" / "d.csv").write_text("a,b\n")
    ws = Workspace(str(tmp_path))
    listed = json.dumps([{"path": "attachments/s.png", "type": "image/png"},
                         {"path": "attachments/d.csv", "type": "text/csv"},
                         {"path": "../../etc/passwd"}, {"path": "attachments/gone.txt"}])
    attached = read_attachments(ws, listed)
    assert [base64.b64decode(i.data) for i in attached.images] == [PNG]
    text = attached.note
    assert "/work/attachments/s.png: image/png" in text and "(shown)" in text
    assert "/work/attachments/d.csv: text/csv, 4 bytes" in text
    assert text.count("(missing)") == 2  # outside the jail, and absent: named, never read
    assert attached.refs == [{"path": "/work/attachments/s.png", "media_type": "image/png",
                              "size": len(PNG), "sha256": hashlib.sha256(PNG).hexdigest()},
                             {"path": "/work/attachments/d.csv", "media_type": "text/csv",
                              "size": 4, "sha256": hashlib.sha256(b"a,b\n").hexdigest()}]
    assert read_attachments(ws, "not json") == Attached()
