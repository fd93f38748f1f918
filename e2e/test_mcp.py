"""MCP servers as tools, in real Chromium: a real MCP server (the Python SDK's FastMCP over
Streamable HTTP, e2e/mcp_server.py, on a loopback port: another origin, with CORS),
reached by the page with the official TypeScript SDK. Its tools are page tools named
<server>__<tool>; text, image, resource and error results reach the model; a secret
header reaches the server and never the worker; a server killed mid-session gives an
error result and its restart is used by the next call; a server that never answers
costs the boot at most the connect timeout."""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from e2e.conftest import ROOT, call

PYTHON = ROOT / ".cache" / "mcp-venv" / "bin" / "python"
SERVER = ROOT / "e2e" / "mcp_server.py"
SECRET = "s3cret-header-value-7f1c"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class McpServer:
    """e2e/mcp_server.py in its own process (its own environment: .cache/mcp-venv)."""

    def __init__(self, port: int, *flags: str) -> None:
        self.port = port
        self.flags = flags
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> McpServer:
        if not PYTHON.exists():
            pytest.fail(f"{PYTHON} is missing; run `make .cache/mcp-venv/.stamp`")
        self.process = subprocess.Popen([str(PYTHON), str(SERVER), str(self.port), *self.flags],
                                        stdout=sys.stdout, stderr=sys.stderr,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the MCP server on port {self.port} did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def mcp_server() -> Iterator[McpServer]:
    server = McpServer(free_port()).start()
    yield server
    server.stop()


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"toolCalls": [{"name": n, "arguments": a} for n, a in pairs]}


@pytest.mark.timeout(180)
def test_mcp_tools_round_trip(app: Any, mcp_server: McpServer) -> None:
    turns = [calls(("demo__add", {"a": 2, "b": 3}), ("demo__pixel", {}), ("demo__links", {}),
                   ("demo__fail", {}), ("demo__whoami", {}), ("demo__add", {"a": "x"})),
             {"text": "first"},
             calls(("demo__add", {"a": 1, "b": 1})), {"text": "second"},
             calls(("demo__add", {"a": 4, "b": 4})), {"text": "third"}]
    servers = [{"name": "demo", "url": mcp_server.url, "headers": {"x-plain": "p"},
                "secretHeaders": {"x-secret": SECRET}, "tools": ["add", "pixel", "links", "fail", "whoami"]}]
    booted = call(app, "mcp.bootWith", servers, turns)
    names = [t["name"] for t in booted["tools"]]
    assert {"demo__add", "demo__pixel", "demo__links", "demo__fail", "demo__whoami"} <= set(names)
    add = next(t for t in booted["tools"] if t["name"] == "demo__add")
    assert "Add two integers" in add["description"]
    assert add["parameters"]["properties"].keys() == {"a", "b"}  # the server's input schema
    assert booted["mcp"] == [{"name": "demo", "url": mcp_server.url, "status": "connected",
                              "tools": ["demo__add", "demo__pixel", "demo__links", "demo__fail",
                                        "demo__whoami"]}]
    first = call(app, "mcp.prompt", "use the tools")
    out = [(e["output"], e["isError"]) for e in first["ends"]]
    assert out[0] == ("2 + 3 = 5", False)
    assert out[1][0].startswith("a red pixel\n[image: image/png, ") and not out[1][1]
    assert out[2] == ("[resource link: notes file:///notes.txt]\n[resource file:///readme.txt]\n"
                      "embedded text", False)
    assert out[3][1] and "this tool always fails" in out[3][0]
    digest = hashlib.sha256(SECRET.encode()).hexdigest()[:16]
    assert out[4] == (f"secret-sha256={digest} cookie=no", False)  # the header reached the server
    assert out[5][1]  # an input that breaks the server's schema never reaches it

    # Killed mid-session: the call is an error result, within its timeout; restarted on
    # the same port, the next call connects again.
    mcp_server.stop()
    second = call(app, "mcp.prompt", "again")
    (output, is_error), = [(e["output"], e["isError"]) for e in second["ends"]]
    assert is_error and f"MCP server demo ({mcp_server.url})" in output
    mcp_server.start()
    third = call(app, "mcp.prompt", "once more")
    assert [(e["output"], e["isError"]) for e in third["ends"]] == [("4 + 4 = 8", False)]
    # The secret header never went to the worker (every message the page sent it).
    assert call(app, "mcp.sentAny", SECRET) is False


@pytest.mark.timeout(180)
def test_a_server_that_never_answers_does_not_hold_the_boot(app: Any, mcp_server: McpServer) -> None:
    silent = McpServer(free_port(), "--hang").start()
    try:
        down = McpServer(free_port())  # not started yet
        servers = [{"name": "silent", "url": silent.url},
                   {"name": "down", "url": down.url, "tools": ["add"]},
                   {"name": "demo", "url": mcp_server.url, "tools": ["add"]}]
        turns = [calls(("down__add", {"a": 1, "b": 2})), {"text": "first"},
                 calls(("down__add", {"a": 3, "b": 4})), {"text": "second"}]
        # A rule for a tool of the silent server must not fail the boot.
        booted = call(app, "mcp.bootWith", servers, turns,
                      {"silent__search": "ask", "demo__add": "allow"})
    finally:
        silent.stop()
    status = {s["name"]: s for s in booted["mcp"]}
    assert status["demo"]["status"] == "connected" and status["demo"]["tools"] == ["demo__add"]
    assert status["silent"]["status"] == "failed" and "no answer within 5000 ms" in status["silent"]["error"]
    assert status["down"]["status"] == "failed" and status["down"]["tools"] == ["down__add"]
    # The down server's tools named in `tools` are offered all the same: an error result
    # while it is down, and the call after it came up reaches it.
    assert sorted(t["name"] for t in booted["tools"] if "__" in t["name"]) == ["demo__add", "down__add"]
    first = call(app, "mcp.prompt", "while down")
    assert first["ends"][0]["isError"] and f"MCP server down ({down.url})" in first["ends"][0]["output"]
    down.start()
    try:
        second = call(app, "mcp.prompt", "once up")
    finally:
        down.stop()
    assert [(e["output"], e["isError"]) for e in second["ends"]] == [("3 + 4 = 7", False)]
    codes = [d for d in booted["diagnostics"] if d["code"] == "mcp_unavailable"]
    assert len(codes) == 2 and any("silent" in d["message"] for d in codes)
    # The silent server was given up after CONNECT_TIMEOUT_MS (its error says so): the
    # boot went on without it. (Timings are the bench's to measure, not a row's.)
    print(f"[mcp] boot with a silent server: {booted['bootMs']:.0f} ms")
    call(app, "mcp.sentAny", "nothing")  # closes the harness


@pytest.mark.timeout(180)
def test_an_image_result_reaches_a_model_that_takes_images(app: Any, provider: Any,
                                                            mcp_server: McpServer) -> None:
    provider.script([{"toolCalls": [["demo__pixel", {}]]}, {"text": "A red pixel."}])
    model = {"api": "openai-chat", "baseUrl": provider.base_url, "apiKey": "k",
             "model": "gpt-4.1-mini"}
    call(app, "mcp.bootWith", [{"name": "demo", "url": mcp_server.url, "tools": ["pixel"]}], [],
         None, model)
    run = call(app, "mcp.prompt", "show me")
    assert run["done"]["text"] == "A red pixel."
    second = [r for r in provider.requests if r.method == "POST"][1]
    parts = [p for m in second.body["messages"] if isinstance(m.get("content"), list)
             for p in m["content"] if p.get("type") == "image_url"]
    assert len(parts) == 1 and parts[0]["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    call(app, "mcp.sentAny", "nothing")


def stats(server: McpServer) -> dict[str, int]:
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/stats", timeout=5) as answer:
        return dict(json.loads(answer.read()))


def encoded(secret: str) -> list[str]:
    """The secret as the hostile server echoes it (hex, base64 at each byte alignment)."""
    raw = secret.encode()
    forms = [secret, raw.hex()]
    for shift in range(3):
        b64 = base64.b64encode(b"\0" * shift + raw).decode().rstrip("=")
        core = b64[math.ceil(shift * 8 / 6):(len(raw) + shift) * 8 // 6]
        forms += [core, core.replace("+", "-").replace("/", "_")]
    return forms


HOSTILE_FIRST = calls(
    ("demo__add", {"a": 1, "b": 2}), ("evil__ok", {}),
    ("evil__backtrack", {"s": "a" * 40 + "!"}),        # re would take 2**40 steps
    ("evil__backtrack", {"s": "a" * 100_000 + "!"}),   # too long to check in bounds
    ("evil__backtrack", {"s": "a" * 2000}),            # the linear matcher: it matches
    ("evil__structured", {}),  # structured output that backtracks on its output schema
    ("evil__reflect", {}), ("evil__http_reflect", {}), ("evil__leak", {}),
    ("evil__leak_image", {}))


@pytest.mark.serial  # it times h.fs answers (under 100 ms): alone, not beside another browser
@pytest.mark.timeout(240)
def test_a_hostile_server_cannot_take_the_harness_down(app: Any, mcp_server: McpServer) -> None:
    evil = McpServer(free_port(), "--hostile").start()
    try:
        servers = [{"name": "demo", "url": mcp_server.url, "tools": ["add"]},
                   {"name": "evil", "url": evil.url, "secretHeaders": {"x-secret": SECRET}}]
        turns = [HOSTILE_FIRST, {"text": "first"},
                 calls(("evil__forever", {})),
                 calls(("demo__add", {"a": 2, "b": 2})), {"text": "after"}]
        # In memory: with OPFS, a reply waits for the flush of each tool_end before it (the
        # durability contract, e2e/test_storage.py), which is not what is measured here.
        booted = call(app, "mcp.bootWith", servers, turns, None, None, "memory")
        # The boot succeeded; the bad tools were left out, each saying why.
        status = {s["name"]: s for s in booted["mcp"]}
        assert status["demo"]["status"] == "connected" and status["demo"]["tools"] == ["demo__add"]
        evil_status = status["evil"]
        assert evil_status["status"] == "connected"
        assert sorted(evil_status["tools"]) == sorted(
            f"evil__{t}" for t in ("ok", "backtrack", "structured", "forever", "reflect",
                                   "http_reflect", "leak", "leak_image"))
        why = {}
        for entry in evil_status["leftOut"]:
            why.setdefault(entry["tool"], []).append(entry["why"])
        assert why["dup"] == ["another of its tools is also evil__dup"] * 2
        assert why["a.b"] == why["a_b"] == ["another of its tools is also evil__a_b"]
        assert "nests more than 32 levels deep" in why["deep"][0]
        assert "non-schema at /properties/x" in why["notschema"][0]
        assert "unknown type" in why["badtype"][0]
        assert 'not of type "object"' in why["stringroot"][0]
        named = [t for t in why if t.startswith("t_")]
        assert named == ["t_[secret header value removed]"]
        assert why[named[0]] == ["its name holds a secret header's value"]
        notes = [d["message"] for d in booted["diagnostics"] if d["code"] == "mcp_unavailable"]
        assert len(notes) == len(evil_status["leftOut"]) == 9
        assert all("MCP server evil" in n and "was left out" in n for n in notes)
        reflect = next(t for t in booted["tools"] if t["name"] == "evil__reflect")
        assert reflect["description"].startswith("the header, base64: [secret header value removed]")

        # Backtracking patterns, reflected secrets: the worker answers h.fs throughout.
        first = call(app, "mcp.promptWatched", "attack")
        out = {}
        for end in first["ends"]:
            out.setdefault(end["name"], []).append((end["output"], end["isError"]))
        assert out["demo__add"] == [("1 + 2 = 3", False)]
        assert out["evil__ok"] == [("ok ran with {}", False)]
        (quick, quick_err), (long, long_err), (fits, fits_err) = out["evil__backtrack"]
        assert quick_err and "does not match '^(a+)+$'" in quick
        assert long_err and "too long to check against the schema pattern" in long
        assert not fits_err and fits.startswith("backtrack ran with")
        assert out["evil__structured"] == [("structured", False)]  # the page did not hang
        (reflected, reflected_err), = out["evil__reflect"]
        assert reflected_err and reflected.count("[secret header value removed]") == 3
        (http_error, http_err), = out["evil__http_reflect"]
        assert http_err and "refused; your headers were" in http_error
        assert "[secret header value removed]" in http_error
        assert out["evil__leak"] == [("hex [secret header value removed] b64url "
                                      "[secret header value removed]", False)]
        (image_text, image_err), = out["evil__leak_image"]
        assert not image_err and image_text.startswith("an image\n[image: image/png, ")
        assert first["probes"] > 0 and first["longestFsMs"] < 100, first["longestFsMs"]
        print(f"[mcp] hostile calls: longest h.fs answer {first['longestFsMs']:.0f} ms "
              f"over {first['probes']} probes")

        # A call answered by a stream that never ends: cancel ends the run within 1 s,
        # and the server sees its stream closed.
        assert stats(evil)["foreverOpen"] == 0
        second = call(app, "mcp.promptWatched", "wait forever", "evil__forever", 500)
        assert second["stop"] == "aborted"
        assert second["endedAfterCancelMs"] < 1000, second["endedAfterCancelMs"]
        assert second["longestFsMs"] < 100, second["longestFsMs"]
        deadline = time.monotonic() + 3
        while stats(evil)["foreverOpen"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stats(evil) == {"foreverOpen": 0, "foreverStarted": 1}
        print(f"[mcp] cancel of a never-ending stream: run ended "
              f"{second['endedAfterCancelMs']:.0f} ms after cancel")

        # The good server's tools still work.
        third = call(app, "mcp.promptWatched", "after")
        assert [(e["output"], e["isError"]) for e in third["ends"]] == [("2 + 2 = 4", False)]
        # The secret never went to the worker, as written or encoded.
        for form in encoded(SECRET):
            assert call(app, "mcp.sentWith", form) == [], form
    finally:
        evil.stop()
        call(app, "mcp.sentAny", "nothing")  # closes the harness
