"""Images and files in a prompt, in real Chromium, against the scripted provider server
(both wire formats): an attached PNG reaches the server as an image part (its bytes
intact) and is in /work/attachments/; `read` of an image file does the same; an
oversized or unknown attachment is refused before anything is sent."""

from __future__ import annotations

import base64
import hashlib
import struct
import zlib
from typing import Any

import pytest

from e2e.conftest import call


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A real PNG of one colour."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


SHOT = png(3, 2, (255, 0, 0))
DOT = png(1, 1, (0, 0, 255))


def model(api: str, provider: Any) -> dict[str, Any]:
    name = "gpt-4.1-mini" if api == "openai-chat" else "claude-sonnet-4-5"
    return {"api": api, "baseUrl": provider.base_url, "apiKey": "k", "model": name}


def images_in(api: str, body: dict[str, Any]) -> list[bytes]:
    """Every image the request carries, decoded, in order."""
    found: list[bytes] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if api == "openai-chat" and value.get("type") == "image_url":
                url = value["image_url"]["url"]
                assert url.startswith("data:image/png;base64,")
                found.append(base64.b64decode(url.split(",", 1)[1]))
                return
            if api == "anthropic-messages" and value.get("type") == "image":
                assert value["source"]["type"] == "base64"
                assert value["source"]["media_type"] == "image/png"
                found.append(base64.b64decode(value["source"]["data"]))
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(body["messages"])
    return found


def posts(provider: Any) -> list[Any]:
    return [r for r in provider.requests if r.method == "POST"]


@pytest.mark.parametrize("api", ["openai-chat", "anthropic-messages"])
def test_an_attached_image_and_a_read_image_reach_the_model(app: Any, provider: Any, api: str) -> None:
    provider.script([{"toolCalls": [["read", {"path": "pics/dot.png"}]]}, {"text": "I see them."}])
    r = call(app, "attachments.promptWith", model(api, provider), "make it look like this",
             [{"name": "shot.png", "type": "image/png", "bytes": list(SHOT), "blob": True},
              {"name": "data.csv", "type": "text/csv", "text": "a,b\n1,2\n"}],
             {"pics/dot.png": list(DOT)})
    assert r["done"]["ok"] and r["done"]["value"]["text"] == "I see them."
    assert r["listed"]["ok"] and sorted(e["name"] for e in r["listed"]["value"]) == ["data.csv", "shot.png"]
    first, second = posts(provider)
    assert images_in(api, first.body) == [SHOT]  # the attachment, bytes intact
    text = str(first.body["messages"])
    assert "attachments/shot.png: image/png, " in text and "3x2" in text
    assert "attachments/data.csv: text/csv, 8 bytes" in text
    # The read tool's image, in the next request (after the attachment, still there).
    assert images_in(api, second.body) == [SHOT, DOT]


def test_an_oversized_or_unknown_attachment_is_refused_before_anything_is_sent(
        app: Any, provider: Any) -> None:
    provider.script([{"text": "never"}])
    big = call(app, "attachments.promptWith", model("openai-chat", provider), "look",
               [{"name": "huge.png", "type": "image/png", "bytes": list(SHOT),
                 "padTo": 5 * 2**20 + 1}])
    assert not big["done"]["ok"] and big["done"]["code"] == "EFBIG"
    assert "huge.png" in big["done"]["message"] and big["events"] == []
    assert not big["listed"]["ok"] and big["listed"]["code"] == "ENOENT"  # nothing written
    odd = call(app, "attachments.promptWith", model("openai-chat", provider), "look",
               [{"name": "x.exe", "type": "application/x-msdownload", "bytes": [77, 90]}])
    assert not odd["done"]["ok"] and odd["done"]["code"] == "EINVAL" and "cannot be attached" in odd["done"]["message"]
    fake = call(app, "attachments.promptWith", model("openai-chat", provider), "look",
                [{"name": "fake.png", "type": "image/png", "bytes": [1, 2, 3, 4]}])
    assert not fake["done"]["ok"] and fake["done"]["code"] == "EINVAL" and "not a PNG" in fake["done"]["message"]
    assert posts(provider) == []


def test_the_thread_keeps_what_the_user_sent_when_the_model_rewrites_it(app: Any) -> None:
    # The run_start event (kept with the thread in /state, out of the model's reach)
    # holds the SHA-256 of the user's bytes, taken before the model ran; the model then
    # rewrites the file in /work. A reader (the widget) compares the two.
    rewrite = ("python3 -c \"open('attachments/shot.png', 'wb').write(bytes.fromhex('"
               f"{DOT.hex()}'))\"")
    turns = [{"toolCalls": [{"name": "bash", "arguments": {"command": rewrite}}]},
             {"text": "done"}]
    r = call(app, "attachments.keptOverRewrite", turns, "shot.png", list(SHOT))
    assert r["stop"] == "stop"
    assert r["attachments"] == [{"path": "/work/attachments/shot.png", "mediaType": "image/png",
                                 "size": len(SHOT), "sha256": hashlib.sha256(SHOT).hexdigest()}]
    assert r["fileSha256Now"] == hashlib.sha256(DOT).hexdigest()  # the model's bytes
