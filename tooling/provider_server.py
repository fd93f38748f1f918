"""A scripted model provider on 127.0.0.1, speaking both wire formats for real.

For tests and for trying a page without an API key: it answers
``POST /v1/chat/completions`` with an OpenAI Chat Completions event stream and
``POST /v1/messages`` with an Anthropic Messages event stream, each the real event
sequence, over real HTTP/1.1 (chunked bodies, keep-alive). Every request consumes the
next scripted :class:`Reply`, which can also misbehave: an error status or raw (HTML)
body, ``Retry-After``, an in-stream error, a cut connection, delays, a body cut into
tiny chunks. With no reply left it answers 500 with a JSON error naming the fix.

Every request is recorded (:attr:`ProviderServer.requests`), and every response carries
CORS headers (preflights are answered), so a browser page can call it too::

    with ProviderServer() as server:
        server.script([Reply(text="Hi!"), Reply(tool_calls=[("read", {"path": "a"})])])
        OpenAIChatConfig(model="m", base_url=server.base_url)  # base_url ends in /v1

Standalone: ``python -m tooling.provider_server --port 8765 --script replies.json``
(a JSON list of replies, camelCase or snake_case keys).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

_ROUTES = {"/v1/chat/completions": "openai", "/v1/messages": "anthropic"}
_DEFAULT_ALLOWED_HEADERS = ("authorization, x-api-key, anthropic-version, "
                            "anthropic-dangerous-direct-browser-access, content-type, accept")
_DEFAULT_ERRORS = {
    400: "Invalid request", 401: "Incorrect API key provided", 403: "Permission denied",
    404: "The model does not exist or you do not have access to it",
    429: "Rate limit reached; try again in a moment", 500: "The server had an error",
    502: "Bad gateway", 503: "The service is temporarily unavailable", 529: "Overloaded",
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
    529: "overloaded_error",
}


class ReplyUsage(BaseModel):
    """The usage a reply reports, in detail (``input`` counts the cached tokens too)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    input: int = 10
    output: int = 5
    cache_read: int = 0
    cache_write: int = Field(default=0, description="Anthropic format only.")
    reasoning: int = Field(default=0, description="OpenAI format only.")


class Reply(BaseModel):
    """One scripted response. Defaults: a 200 event stream with nothing in it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    text: str = ""
    reasoning: str = ""
    reasoning_field: Literal["reasoning_content", "reasoning"] = Field(
        default="reasoning_content", description="OpenAI format: the delta key for it.")
    tool_calls: list[tuple[str, dict[str, Any] | str]] = Field(
        default_factory=list, description="(name, arguments object or raw JSON text).")
    interleave_tool_calls: bool = Field(
        default=False, description="OpenAI format: alternate the argument pieces of "
        "parallel calls (servers may; proves assembly by index).")
    usage: tuple[int, int] | ReplyUsage = Field(
        default=(10, 5), description="(input, output) tokens, or the detailed usage.")
    status: int = 200
    error: str | None = Field(default=None, description="Message of the error body/event.")
    body: str | None = Field(default=None, description="A raw body instead (e.g. HTML).")
    content_type: str | None = None
    retry_after: str | float | None = None
    error_event_after: int | None = Field(
        default=None, ge=0, description="Send an in-stream error after this many events.")
    cut_after: int | None = Field(
        default=None, ge=0, description="Drop the connection after this many events.")
    cut_clean: bool = Field(
        default=False, description="With cut_after: end the HTTP body properly instead, "
        "just without the stream's terminator.")
    delay_s: float = Field(default=0, ge=0, description="Before the response.")
    event_delay_s: float = Field(default=0, ge=0, description="Between events.")
    chunk_size: int | None = Field(
        default=None, ge=1, description="Write the body in pieces of this many bytes.")
    require_headers: dict[str, str] = Field(
        default_factory=dict, description="Answer 401 unless the request has these.")


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-case names."""
    body: Any
    """The parsed JSON body, or None."""
    outcome: str = "pending"
    """How the response ended: complete, error_status, error_event, cut, client_closed."""


class ProviderServer:
    """The server (see the module doc). Thread-safe; ``start``/``stop`` or ``with``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._address = (host, port)
        self._lock = threading.Lock()
        self._replies: deque[Reply] = deque()
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    def script(self, replies: Iterable[Reply | dict[str, Any]]) -> None:
        """Queue replies; each request takes the next one."""
        parsed = [r if isinstance(r, Reply) else Reply.model_validate(r) for r in replies]
        with self._lock:
            self._replies.extend(parsed)

    def reset(self) -> None:
        """Forget the queued replies and the recorded requests (reuse between tests)."""
        with self._lock:
            self._replies.clear()
            self._requests.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the provider server is not started; call start() first")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The ``baseUrl`` for either adapter."""
        return self.url + "/v1"

    def start(self) -> ProviderServer:
        self._httpd = _HttpServer(self._address, _Handler)
        self._httpd.provider = self
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None and self._thread is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> ProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _record(self, request: RecordedRequest) -> int:
        with self._lock:
            self._requests.append(request)
            return len(self._requests)

    def _next_reply(self) -> Reply | None:
        with self._lock:
            return self._replies.popleft() if self._replies else None

    def _next_id(self) -> int:
        with self._lock:
            return next(self._ids)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    provider: ProviderServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client dropping a keep-alive connection (as one does after the final event)
        # is normal here; anything else is a bug worth the traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HttpServer

    def log_message(self, format: str, *args: Any) -> None:
        pass  # tests stay quiet

    def do_OPTIONS(self) -> None:
        self._record(b"")
        self.send_response(204)
        self._cors()
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        requested = self.headers.get("Access-Control-Request-Headers")
        self.send_header("Access-Control-Allow-Headers", requested or _DEFAULT_ALLOWED_HEADERS)
        if self.headers.get("Access-Control-Request-Private-Network"):
            self.send_header("Access-Control-Allow-Private-Network", "true")
        self.send_header("Access-Control-Max-Age", "600")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        record = self._record(b"")
        self._send_error(record, "openai", 404, self._no_route())

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        record = self._record(body)
        try:
            self._answer(record)
        except OSError:  # the client went away mid-response
            record.outcome = "client_closed"
            self.close_connection = True

    def _answer(self, record: RecordedRequest) -> None:
        api = _ROUTES.get(record.path)
        if api is None:
            self._send_error(record, "openai", 404, self._no_route())
            return
        reply = self.server.provider._next_reply()
        if reply is None:
            number = len(self.server.provider.requests)
            self._send_error(record, api, 500, f"the provider server has no scripted reply "
                             f"left for request {number}: add one with server.script([...])")
            return
        time.sleep(reply.delay_s)
        for name, value in reply.require_headers.items():
            if record.headers.get(name.lower()) != value:
                self._send_error(record, api, 401, f"the request lacks the header "
                                 f"'{name}: {value}' this scripted reply requires")
                return
        if reply.body is not None or reply.status != 200:
            self._send_error(record, api, reply.status, reply.error, reply)
        else:
            self._send_stream(record, api, reply)

    def _send_error(self, record: RecordedRequest, api: str, status: int, message: str | None,
                    reply: Reply | None = None) -> None:
        if reply is not None and reply.body is not None:
            body = reply.body.encode()
            guessed = "text/html" if reply.body.lstrip().startswith("<") else "text/plain"
            content_type = reply.content_type or f"{guessed}; charset=utf-8"
        else:
            body = json.dumps(_error_payload(api, status, message)).encode()
            content_type = "application/json"
        self.send_response(status)
        self._cors()
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if reply is not None and reply.retry_after is not None:
            self.send_header("Retry-After", str(reply.retry_after))
        self.end_headers()
        # Outcomes are set before the last write: once the client has the bytes, a test
        # may look. A failed write still turns it into "client_closed".
        record.outcome = "error_status"
        self.wfile.write(body)

    def _send_stream(self, record: RecordedRequest, api: str, reply: Reply) -> None:
        model = str((record.body or {}).get("model") or "scripted")
        render = _openai_events if api == "openai" else _anthropic_events
        events = render(reply, model, self.server.provider._next_id)
        self.send_response(200)
        self._cors()
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        writer = _ChunkedWriter(self.wfile, reply.chunk_size)
        for number, event in enumerate(events):
            if number == reply.cut_after:
                record.outcome = "cut"
                writer.flush()
                if reply.cut_clean:
                    writer.finish()
                self.close_connection = True  # without the final chunk: a cut
                return
            if number == reply.error_event_after:
                record.outcome = "error_event"
                writer.write(_error_event(api, reply.error))
                writer.finish()
                return
            if number and reply.event_delay_s:
                writer.flush()
                time.sleep(reply.event_delay_s)
            if number == len(events) - 1:
                record.outcome = "complete"
            writer.write(event)
        writer.finish()

    def _record(self, body: bytes) -> RecordedRequest:
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        record = RecordedRequest(self.command, urlsplit(self.path).path.rstrip("/"),
                                 {k.lower(): v for k, v in self.headers.items()}, parsed)
        self.server.provider._record(record)
        return record

    def _cors(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        # A page may only read these response headers if they are exposed.
        self.send_header("Access-Control-Expose-Headers", "retry-after, retry-after-ms")

    def _no_route(self) -> str:
        return (f"no route {self.command} {self.path}: this server answers POST "
                "/v1/chat/completions and POST /v1/messages (baseUrl should end in /v1)")


class _ChunkedWriter:
    """Writes an HTTP/1.1 chunked body, re-cut into pieces of ``size`` bytes if given
    (a piece may end mid-line or mid-character, and span events)."""

    def __init__(self, out: BufferedIOBase, size: int | None) -> None:
        self.out, self.size, self.pending = out, size, b""

    def write(self, data: bytes) -> None:
        if self.size is None:
            self._chunk(data)
            return
        self.pending += data
        while len(self.pending) >= self.size:
            self._chunk(self.pending[: self.size])
            self.pending = self.pending[self.size :]

    def flush(self) -> None:
        if self.pending:
            self._chunk(self.pending)
            self.pending = b""

    def finish(self) -> None:
        self.flush()
        self.out.write(b"0\r\n\r\n")

    def _chunk(self, data: bytes) -> None:
        self.out.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.out.flush()


def _error_payload(api: str, status: int, message: str | None) -> dict[str, Any]:
    text = message or _DEFAULT_ERRORS.get(status, f"HTTP {status}")
    if api == "anthropic":
        kind = _ANTHROPIC_ERROR_TYPES.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": text}}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": text, "type": kind, "param": None, "code": None}}


def _error_event(api: str, message: str | None) -> bytes:
    if api == "anthropic":
        error = {"type": "overloaded_error", "message": message or "Overloaded"}
        return _sse({"type": "error", "error": error}, "error")
    return _sse({"error": {"message": message or "The server had an error while processing "
                           "your request", "type": "server_error", "param": None,
                           "code": None}})


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    data = json.dumps(payload, ensure_ascii=False)
    if not data.isascii():
        try:
            data.encode()
        except UnicodeEncodeError:  # a lone surrogate (scripted on purpose): escape it
            data = json.dumps(payload)
    return (f"event: {event}\n" if event else "").encode() + f"data: {data}\n\n".encode()


def _pieces(text: str, size: int = 0) -> list[str]:
    """Word-sized pieces (or ``size``-character ones), as a model would stream them."""
    if size:
        return [text[i : i + size] for i in range(0, len(text), size)]
    return [p for p in re.findall(r"\S*\s*", text) if p]


def _arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _openai_events(reply: Reply, model: str, next_id: Callable[[], int]) -> list[bytes]:
    base = {"id": f"chatcmpl-{next_id()}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model, "system_fingerprint": "fp_scripted"}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _sse({**base, "choices": [choice]})

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": None, reply.reasoning_field: p})
               for p in _pieces(reply.reasoning)]
    events += [chunk({"content": p}) for p in _pieces(reply.text)]
    per_call: list[list[bytes]] = []
    for index, (name, arguments) in enumerate(reply.tool_calls):
        head = {"index": index, "id": f"call_{next_id()}", "type": "function",
                "function": {"name": name, "arguments": ""}}
        per_call.append([chunk({"tool_calls": [head]})] + [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in _pieces(_arguments_text(arguments), 7)])
    if reply.interleave_tool_calls:
        events += [e for group in itertools.zip_longest(*per_call) for e in group if e]
    else:
        events += [e for call in per_call for e in call]
    events.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    usage = _usage(reply)
    wire: dict[str, Any] = {"prompt_tokens": usage.input, "completion_tokens": usage.output,
                            "total_tokens": usage.input + usage.output}
    if isinstance(reply.usage, ReplyUsage):  # the details, as OpenAI sends them
        wire["prompt_tokens_details"] = {"cached_tokens": usage.cache_read, "audio_tokens": 0}
        wire["completion_tokens_details"] = {
            "reasoning_tokens": usage.reasoning, "audio_tokens": 0,
            "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
    events.append(_sse({**base, "choices": [], "usage": wire}))
    events.append(b"data: [DONE]\n\n")
    return events


def _usage(reply: Reply) -> ReplyUsage:
    if isinstance(reply.usage, ReplyUsage):
        return reply.usage
    return ReplyUsage(input=reply.usage[0], output=reply.usage[1])


def _anthropic_events(reply: Reply, model: str, next_id: Callable[[], int]) -> list[bytes]:
    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, **fields}, kind)

    usage = _usage(reply)
    counts = {"input_tokens": usage.input - usage.cache_read - usage.cache_write}
    if isinstance(reply.usage, ReplyUsage):  # the cache counts, as Anthropic sends them
        counts.update(cache_creation_input_tokens=usage.cache_write,
                      cache_read_input_tokens=usage.cache_read)
    message: dict[str, Any] = {"id": f"msg_{next_id()}", "type": "message", "role": "assistant",
               "model": model, "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {**counts, "output_tokens": 1}}
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if reply.reasoning:
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""},
                       [{"type": "thinking_delta", "thinking": p}
                        for p in _pieces(reply.reasoning)]
                       + [{"type": "signature_delta", "signature": f"sig-{next_id()}"}]))
    if reply.text:
        blocks.append(({"type": "text", "text": ""},
                       [{"type": "text_delta", "text": p} for p in _pieces(reply.text)]))
    for name, arguments in reply.tool_calls:
        start = {"type": "tool_use", "id": f"toolu_{next_id()}", "name": name, "input": {}}
        pieces = ["", *_pieces(_arguments_text(arguments), 7)]
        blocks.append((start, [{"type": "input_json_delta", "partial_json": p} for p in pieces]))
    events = [event("message_start", message=message)]
    for index, (start, deltas) in enumerate(blocks):
        events.append(event("content_block_start", index=index, content_block=start))
        if index == 0:
            events.append(event("ping"))
        events += [event("content_block_delta", index=index, delta=d) for d in deltas]
        events.append(event("content_block_stop", index=index))
    if not blocks:
        events.append(event("ping"))
    stop = "tool_use" if reply.tool_calls else "end_turn"
    # Cumulative; the detailed form repeats the input counts, as the API now does.
    final = {**counts, "output_tokens": usage.output} if isinstance(
        reply.usage, ReplyUsage) else {"output_tokens": usage.output}
    events.append(event("message_delta", delta={"stop_reason": stop, "stop_sequence": None},
                        usage=final))
    events.append(event("message_stop"))
    return events


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tooling.provider_server",
                                     description="A scripted OpenAI/Anthropic provider.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", help="a JSON file: a list of replies")
    args = parser.parse_args(argv)
    server = ProviderServer(args.host, args.port)
    if args.script:
        with open(args.script, encoding="utf-8") as file:
            server.script(json.load(file))
    server.start()
    print(f"provider server on {server.url} (baseUrl {server.base_url}); Ctrl-C stops it",
          flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
