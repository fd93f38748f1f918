"""A real MCP server for the e2e rows (e2e/test_mcp.py): the Python MCP SDK's FastMCP over
Streamable HTTP on a loopback port, with CORS headers, run from its own environment
(.cache/mcp-venv: the SDK needs a newer jsonschema than the harness pins).

    python e2e/mcp_server.py PORT [--hang]

Tools: ``add`` (text), ``pixel`` (text and a PNG image), ``links`` (a resource link and
an embedded resource), ``fail`` (an error result) and ``whoami`` (which request headers
arrived: a digest of the secret header's value, and whether a Cookie came). ``--hang``: accept
connections and never answer (a server that does not answer at boot).
"""

from __future__ import annotations

import base64
import hashlib
import socket
import sys
import time

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
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
    app = CORSMiddleware(server.streamable_http_app(), allow_origins=["*"], allow_methods=["*"],
                         allow_headers=["*"], expose_headers=["mcp-session-id"])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
