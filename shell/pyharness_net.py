"""pyharness_net: the model's one way to the network from python3 in the sandbox.

Only when the page allows it (``createHarness({network: {allow: [...]}})``): the request
goes from the sandbox to the harness to the page, which checks it against the allow-list
(origin and path prefix, methods), sends it without cookies, follows no redirect and caps
the response. Anything else raises ``NetworkError`` with the page's reason.

    import pyharness_net
    r = pyharness_net.fetch("https://api.example.com/data/x.json")
    r.status, r.headers, r.body, r.text(), r.json()
"""

from __future__ import annotations

import json as _json
from dataclasses import dataclass

import pyharness_net_js  # registered by the sandbox (shell/sandbox.mjs)
from pyodide.ffi import run_sync


class NetworkError(OSError):
    """The page refused the request, or it failed."""


@dataclass
class Response:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    url: str

    def text(self, encoding: str = "utf-8") -> str:
        return self.body.decode(encoding, errors="replace")

    def json(self) -> object:
        return _json.loads(self.body)


def fetch(url: str, method: str = "GET", headers: dict[str, str] | None = None,
          body: str | bytes | None = None) -> Response:
    if isinstance(body, bytes):
        body = body.decode("utf-8")
    request = _json.dumps({"url": str(url), "method": str(method).upper(),
                           "headers": dict(headers or {}), "body": body})
    reply = run_sync(pyharness_net_js.request(request))
    if not reply.ok:
        raise NetworkError(str(reply.error))
    return Response(int(reply.status), str(reply.statusText), _json.loads(reply.headers),
                    bytes(reply.body.to_bytes()), str(reply.url))
