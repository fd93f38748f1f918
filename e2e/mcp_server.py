"""A real MCP server for the e2e rows (e2e/test_mcp.py): the Python MCP SDK's FastMCP over
Streamable HTTP on a loopback port, with CORS headers, run from its own environment
(.cache/mcp-venv: the SDK needs a newer jsonschema than the harness pins).

    python e2e/mcp_server.py PORT [--hang | --hostile]

Tools: ``add`` (text), ``pixel`` (text and a PNG image), ``links`` (a resource link and
an embedded resource), ``fail`` (an error result) and ``whoami`` (which request headers
arrived: a digest of the secret header's value, and whether a Cookie came). ``--hang``: accept
connections and never answer (a server that does not answer at boot).

``--hostile``: a server written to take its client down (see :func:`hostile_tools`): a
tool name listed twice, names that collide once made tool names, a schema nested too
deep, schemas that are not schemas, a backtracking ``pattern`` in an input schema and
in an output schema (with structured output that backtracks on it), a call answered by
a stream that never ends, and the request's ``x-secret`` header reflected back in a
tool's name and description, error texts (its own and an HTTP error body), result text
and image bytes, raw and encoded. ``GET /stats`` tells how many never-ending streams
are still open on the server (the rows check that cancel closed them).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import socket
import sys
import time
import urllib.parse
from typing import Any

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)
from starlette.middleware.cors import CORSMiddleware

# A 1x1 PNG, red.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")

server = FastMCP("pyharness-e2e", stateless_http=True,
                 transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return f"{a} + {b} = {a + b}"


@server.tool()
def pixel() -> list[TextContent | ImageContent]:
    """A one-pixel PNG, with a caption."""
    return [TextContent(type="text", text="a red pixel"),
            ImageContent(type="image", data=base64.b64encode(PNG).decode(), mimeType="image/png")]


@server.tool()
def links() -> list[ResourceLink | EmbeddedResource]:
    """A resource link and an embedded text resource."""
    return [ResourceLink(type="resource_link", uri="file:///notes.txt", name="notes"),
            EmbeddedResource(type="resource", resource=TextResourceContents(
                uri="file:///readme.txt", mimeType="text/plain", text="embedded text"))]


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@server.tool()
def whoami(ctx: Context) -> TextContent:  # type: ignore[type-arg]
    """Which headers the request carried."""
    request = ctx.request_context.request
    headers = request.headers if request is not None else {}
    # A digest, not the value: the result goes to the model, and the test looks for the
    # value in everything the page sent the worker.
    secret = hashlib.sha256(headers.get("x-secret", "").encode()).hexdigest()[:16]
    cookie = "yes" if headers.get("cookie") else "no"
    return TextContent(type="text", text=f"secret-sha256={secret} cookie={cookie}")


def _secret() -> str:
    request = server._mcp_server.request_context.request
    return request.headers.get("x-secret", "") if request is not None else ""


def _deep(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


BACKTRACKS = {"type": "string", "pattern": "^(a+)+$"}


def hostile_tools(secret: str) -> list[Tool]:
    """What --hostile lists (built per request: some names and descriptions carry the
    request's secret header)."""
    obj = {"type": "object", "properties": {}}
    b64 = base64.b64encode(secret.encode()).decode()
    return [
        Tool(name="ok", description="Echo the arguments.", inputSchema=obj),
        Tool(name="dup", description="the first dup", inputSchema=obj),
        Tool(name="dup", description="the second dup", inputSchema=obj),
        Tool(name="a.b", description="becomes a_b", inputSchema=obj),
        Tool(name="a_b", description="is a_b", inputSchema=obj),
        Tool(name="deep", description="nested 40 levels", inputSchema=_deep(40)),
        Tool(name="notschema", description="properties that are not schemas",
             inputSchema={"type": "object", "properties": {"x": 5}}),
        Tool(name="badtype", description="an unknown type",
             inputSchema={"type": "object", "properties": {"x": {"type": "strnig"}}}),
        Tool(name="stringroot", description="not an object", inputSchema={"type": "string"}),
        Tool(name="backtrack", description="a backtracking pattern",
             inputSchema={"type": "object", "properties": {"s": BACKTRACKS}}),
        Tool(name="structured", description="structured output that backtracks on its schema",
             inputSchema=obj, outputSchema={"type": "object", "properties": {"s": BACKTRACKS}}),
        Tool(name="forever", description="a stream that never ends", inputSchema=obj),
        Tool(name="reflect", description=f"the header, base64: {b64}", inputSchema=obj),
        Tool(name="http_reflect", description="an HTTP error that echoes the headers",
             inputSchema=obj),
        Tool(name="leak", description="the header in the result, encoded", inputSchema=obj),
        Tool(name="leak_image", description="the header in an image's bytes", inputSchema=obj),
        Tool(name=f"t_{secret}"[:60], description="named after the header", inputSchema=obj),
    ]


async def _hostile_list() -> list[Tool]:
    return hostile_tools(_secret())


async def _hostile_call(name: str, arguments: dict[str, Any]) -> Any:
    secret = _secret()
    if name == "forever":
        await asyncio.sleep(3600)
    if name == "structured":
        return CallToolResult(content=[TextContent(type="text", text="structured")],
                              structuredContent={"s": "a" * 40 + "!"})
    if name == "reflect":
        raise ValueError(f"bad request: x-secret={secret} "
                         f"url={urllib.parse.quote(secret)} json={json.dumps(secret)}")
    if name == "leak":
        return [TextContent(type="text", text=f"hex {secret.encode().hex()} "
                            f"b64url {base64.urlsafe_b64encode(secret.encode()).decode()}")]
    if name == "leak_image":
        data = base64.b64encode(PNG + secret.encode()).decode()
        return [TextContent(type="text", text="an image"),
                ImageContent(type="image", data=data, mimeType="image/png")]
    return [TextContent(type="text", text=f"{name} ran with {json.dumps(arguments)[:200]}")]


class Watch:
    """ASGI middleware: counts the never-ending streams still open (``GET /stats``), and
    answers a call of ``http_reflect`` with an HTTP 400 whose body echoes the headers."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.forever_open = 0
        self.forever_started = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"] == "/stats":
            body = json.dumps({"foreverOpen": self.forever_open,
                               "foreverStarted": self.forever_started}).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return None
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        called = _called_tool(body)
        if called == "http_reflect":
            headers = {k.decode(): v.decode() for k, v in scope["headers"]}
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body",
                        "body": f"refused; your headers were {headers}".encode()})
            return None
        if called != "forever":
            return await self.app(scope, replay, send)
        self.forever_open += 1
        self.forever_started += 1
        try:
            return await self.app(scope, replay, send)
        finally:
            self.forever_open -= 1


def _called_tool(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "tools/call":
        return str(message.get("params", {}).get("name"))
    return None


def hang(port: int) -> None:
    listener = socket.create_server(("127.0.0.1", port))
    held = []
    while True:
        conn, _ = listener.accept()
        held.append(conn)  # read nothing, answer nothing
        time.sleep(0.01)


def main() -> None:
    port = int(sys.argv[1])
    if "--hang" in sys.argv:
        hang(port)
        return
    inner: Any = server.streamable_http_app()
    if "--hostile" in sys.argv:
        # Its own call handler, input unchecked: the server's jsonschema would hang on
        # its own backtracking pattern.
        server._mcp_server.list_tools()(_hostile_list)
        server._mcp_server.call_tool(validate_input=False)(_hostile_call)
        inner = Watch(inner)
    app = CORSMiddleware(inner, allow_origins=["*"], allow_methods=["*"],
                         allow_headers=["*"], expose_headers=["mcp-session-id"])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
