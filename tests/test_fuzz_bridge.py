"""The fs bridge under malformed input: generated requests into ``Session.fs``, the
entry the worker calls for every ``h.fs`` message (JSON text plus optional bytes).

Oracles: no call raises; each gives exactly one reply, either bytes (a successful
readFile) or JSON ``{"ok": true, "value"}`` / ``{"ok": false, "code": "E...",
"message"}`` whose text is valid UTF-8; nothing outside the workspace changes; and the
session still serves files and runs a prompt afterwards.
"""

import asyncio
import json
import os
import re
import time

from fuzz_scale import fuzz_settings, report, rng, scale
from hypothesis import given
from hypothesis import strategies as st

from harness.limits import clean_text
from harness.runtime.native import NativeRuntime
from harness.session import Session

OPS = ["readFile", "writeFile", "readdir", "stat", "mkdir", "rm", "rename"]
FIELDS = ["op", "path", "from", "to", "append", "recursive", "force", "encoding", "data"]
PATHS = ["a", "a/b", ".", "/work", "/work/..", "../x", "/etc/passwd", "", "a\x00b", "\ud800",
         "x" * 300, "/".join(["d"] * 300), "\\..\\x", "%2e%2e/x", "\u2024\u2024/x", "a/", "//a"]


def junk_value(r, depth=0):
    kind = r.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return r.choice([True, False])
    if kind == 2:
        return r.choice([0, -1, 1.5, 2**64, float("1e308")])
    if kind == 3:
        return r.choice(PATHS)
    if kind == 4:
        return "".join(chr(r.randrange(0x110000)) for _ in range(r.randrange(8)))
    if kind == 5:
        return r.choice([*OPS, "chmod", "OPEN", "__proto__", "constructor"])
    if kind == 6:
        return [junk_value(r, depth + 1) for _ in range(r.randrange(4))]
    return {r.choice([*FIELDS, "x", ""]): junk_value(r, depth + 1) for _ in range(r.randrange(5))}


def request(r):
    """One malformed (or occasionally valid) request text, built several ways."""
    kind = r.randrange(10)
    if kind <= 3:  # a plausible request with wrong, missing or extra fields
        req = {"op": r.choice(OPS)}
        for name in r.sample(FIELDS[1:], r.randrange(4)):
            req[name] = junk_value(r) if r.random() < 0.5 else r.choice(PATHS)
        text = json.dumps(req, ensure_ascii=r.random() < 0.5)
    elif kind == 4:  # any JSON value
        text = json.dumps(junk_value(r))
    elif kind == 5:  # a valid request cut or corrupted at a random place
        text = json.dumps({"op": r.choice(OPS), "path": r.choice(PATHS), "recursive": True})
        at = r.randrange(len(text) + 1)
        text = text[:at] + r.choice(["", "}", "\\", '"', "\x00", "\ud800", "]]]"]) + text[at:]
    elif kind == 6:  # deep or huge
        text = r.choice(["[" * 100_000, '{"op": "stat", "path": ' + "[" * 5000 + "1" + "]" * 5000
                         + "}", '{"op": "readFile", "path": "' + "a" * 100_000 + '"}',
                         '{"op":"stat","path":"a"' + ',"x":1' * 20_000 + "}"])
    elif kind == 7:  # not JSON text at all
        text = r.choice(["", " ", "null", "undefined", "NaN", "\ufeff{}", "{'op': 'stat'}",
                         "\ud800\udc00", "\x00" * 10, "🙂" * 50])
    elif kind == 8:  # duplicate keys, odd numbers, escapes
        text = r.choice(['{"op": "stat", "op": "rm", "path": "a"}',
                         '{"op": "mkdir", "path": "a", "recursive": 1e400}',
                         '{"op": "st\\u0061t", "path": "\\ud800"}',
                         '{"op": "readdir", "path": "/work", "path": "../.."}'])
    else:  # a valid request (the session must keep working between bad ones)
        text = json.dumps({"op": r.choice(OPS), "path": r.choice(PATHS[:4]),
                           "from": "a", "to": "b"} if r.random() < 0.2 else
                          {"op": r.choice(["stat", "readdir", "mkdir", "rm"]),
                           "path": r.choice(PATHS[:4])})
    data = r.choice([None, None, b"", b"xyz", bytes(range(256)), b"\xff\xfe"])
    return text, data


def check_reply(reply):
    if isinstance(reply, bytes):
        return "bytes"
    assert isinstance(reply, str)
    reply.encode("utf-8")
    message = json.loads(reply)
    assert isinstance(message, dict) and isinstance(message.get("ok"), bool)
    if message["ok"]:
        assert set(message) == {"ok", "value"}
        return "ok"
    assert set(message) == {"ok", "code", "message"}
    assert re.fullmatch(r"E[A-Z]+", message["code"]), message
    assert isinstance(message["message"], str) and message["message"]
    assert clean_text(message["message"]) == message["message"]
    assert message["code"] != "EIO", message  # EIO would mean a bug caught by the net
    return message["code"]


def outside(tmp):
    return sorted(os.listdir(tmp))


def test_generated_malformed_requests(tmp_path):
    config = json.dumps({"model": {"api": "scripted", "turns": [{"text": "still here"}]}})
    s = Session.from_options(config, NativeRuntime(str(tmp_path / "ws")))
    (tmp_path / "outside.txt").write_text("outside")
    before = outside(tmp_path)
    r = rng("bridge")
    total = scale(10_000, 200_000)
    outcomes: dict[str, int] = {}
    started = time.monotonic()
    for _ in range(total):
        text, data = request(r)
        kind = check_reply(s.fs(text, data))
        outcomes[kind] = outcomes.get(kind, 0) + 1
    assert outside(tmp_path) == before
    assert (tmp_path / "outside.txt").read_text() == "outside"
    # Still usable: files and a run.
    assert json.loads(s.fs('{"op": "mkdir", "path": "after", "recursive": true}'))["ok"]
    assert json.loads(s.fs('{"op": "writeFile", "path": "after/f"}', b"ok"))["ok"]
    assert s.fs('{"op": "readFile", "path": "after/f"}') == b"ok"
    async def ask():
        return await s.prompt("r1", "are you there?")

    result = asyncio.run(ask())
    assert result.stop_reason == "stop" and result.text == "still here"
    report("bridge-fs-requests", requests=total, uncaught=0, replies=total,
           outcomes=dict(sorted(outcomes.items())), seconds=round(time.monotonic() - started, 1))


def test_arbitrary_text_and_json(tmp_path):
    """Hypothesis on top: any text, and any JSON value with the request's keys."""
    s = Session.from_options(json.dumps({"model": {"api": "scripted", "turns": []}}),
                             NativeRuntime(str(tmp_path / "ws")))
    values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                          lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=4),
                          max_leaves=12)
    count = {"requests": 0}

    @fuzz_settings(short=300, long=20_000)
    @given(st.one_of(st.text(), values.map(json.dumps)), st.none() | st.binary(max_size=8))
    def check(text, data):
        count["requests"] += 1
        check_reply(s.fs(text, data))

    check()
    report("bridge-hypothesis", requests=count["requests"], uncaught=0)
