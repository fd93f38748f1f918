"""What the HTTP model adapters share: send, retry, read the event stream, explain errors.

An adapter supplies two things: a function that builds the :class:`HttpRequest` and a
:class:`StreamDecoder` that turns SSE events of its wire format into model events.
:class:`HttpStreamer` does the rest, and keeps the model contract: it never raises
(except ``asyncio.CancelledError``); every failure is a final :class:`Failed`.

Retries: a response with status 429, 500, 502, 503, 504 or 529, a connection failure,
or a body that ends before any model event reached the caller, is tried again, at most
``max_retries`` times, after an exponential backoff or the server's ``Retry-After``
(capped). Once an event of a response has been yielded, nothing is retried: the caller
already showed it. Other statuses are not retried; their :class:`Failed` says what to fix.

Failed codes: ``http_<status>``, ``connection``, ``idle_timeout``, ``stream_error`` (the
provider reported an error mid-stream, or the stream ended early), ``bad_response``
(not an event stream, or an unreadable event), ``bad_request`` (the request could not
be built), ``model_error`` (a bug in an adapter, reported instead of raised).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import html
import json
import random
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..events import Tokens
from ..limits import MAX_JSON_DEPTH, clean_text, loads_bounded
from ..transport import HttpRequest, HttpResponse, Transport, TransportError
from .base import Done, Failed, ModelEvent, ModelRequest
from .configs import ProviderConfig
from .sse import SseEvent, SseEventTooLarge, SseParser

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 529})
_MAX_ERROR_BODY = 64 * 1024
_DETAIL_LIMIT = 300

Sleep = Callable[[float], Awaitable[None]]


class StreamDecoder(Protocol):
    """Turns the SSE events of one response into model events (one decoder per attempt)."""

    def feed(self, event: SseEvent) -> list[ModelEvent]:
        """Translate one event. A :class:`Done` or :class:`Failed` in the result ends the
        stream: nothing after it is read."""
        ...

    def end(self) -> ModelEvent:
        """The body ended before a Done or Failed: return the last event, a Failed if the
        wire format says the answer is incomplete."""
        ...

    @property
    def usage(self) -> Tokens | None:
        """The usage the response reported so far, if any."""
        ...


@dataclass(frozen=True)
class Backoff:
    """Delay before retry ``n`` (from 0): ``base_s * 2**n``, capped at ``cap_s``, plus up
    to ``jitter`` of itself at random. A ``Retry-After`` from the server is used as it
    is, also capped. ``jitter=0`` makes the delays exact (for tests)."""

    base_s: float = 1.0
    cap_s: float = 60.0
    jitter: float = 0.2
    rng: Callable[[], float] = random.random

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.cap_s)
        delay = min(self.cap_s, self.base_s * 2.0**attempt)
        return min(self.cap_s, delay * (1 + self.jitter * self.rng()))


@dataclass(frozen=True)
class _Retry:
    """Marker from one attempt: it failed before yielding anything; try again."""

    failure: Failed
    retry_after: float | None = None


class HttpStreamer:
    """Sends a model request and streams its answer, with retries (see the module doc)."""

    def __init__(
        self,
        transport: Transport,
        *,
        model_name: str,
        max_retries: int = 3,
        idle_timeout_s: float = 60.0,
        backoff: Backoff | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.transport = transport
        self.model_name = model_name
        self.max_retries = max_retries
        self.idle_timeout_s = idle_timeout_s
        self.backoff = backoff or Backoff()
        self.sleep = sleep

    async def stream(
        self, build: Callable[[], HttpRequest], decoder: Callable[[], StreamDecoder]
    ) -> AsyncIterator[ModelEvent]:
        """Build the request (errors included in the contract), send it, yield events."""
        try:
            request = build()
        except Exception as exc:
            yield Failed(f"could not build the model request: {exc}", "bad_request")
            return
        try:
            async for event in self._with_retries(request, decoder):
                yield event
        except Exception as exc:  # an adapter bug must end the stream, not raise
            yield Failed(f"internal error in the model adapter: {type(exc).__name__}: {exc}")

    async def _with_retries(
        self, request: HttpRequest, decoder: Callable[[], StreamDecoder]
    ) -> AsyncIterator[ModelEvent]:
        for attempt in range(self.max_retries + 1):
            retry: _Retry | None = None
            async with aclosing(self._attempt(request, decoder())) as items:
                async for item in items:
                    if isinstance(item, _Retry):
                        retry = item
                        break
                    yield item
            if retry is None:
                return
            if attempt == self.max_retries:
                failure = retry.failure
                if self.max_retries:
                    failure = Failed(f"{failure.message} (still failing after "
                                     f"{self.max_retries} retries)", failure.code)
                yield failure
                return
            await self.sleep(self.backoff.delay(attempt, retry.retry_after))

    async def _attempt(
        self, request: HttpRequest, decoder: StreamDecoder
    ) -> AsyncGenerator[ModelEvent | _Retry, None]:
        host = urlsplit(request.url).netloc or request.url
        try:
            async with asyncio.timeout(self.idle_timeout_s):
                response = await self.transport.send(request)
        except TransportError as exc:
            yield _Retry(Failed(f"could not reach {host} ({exc}): check baseUrl and that "
                                "the server is running", "connection"))
            return
        except TimeoutError:
            yield Failed(f"{host} sent no response in {self.idle_timeout_s:g} s; raise "
                         "idleTimeoutMs if the server is slow to start answering",
                         "idle_timeout")
            return
        try:
            if not 200 <= response.status < 300:
                yield await self._http_error(request, response, host)
                return
            async with aclosing(self._read_stream(response, host, decoder)) as items:
                async for item in items:
                    if isinstance(item, Failed) and item.usage is None:
                        # what the answer used before it failed is spent all the same
                        item = dataclasses.replace(item, usage=decoder.usage)
                    yield item
        finally:
            with contextlib.suppress(Exception):  # cleanup must not hide the outcome
                await response.aclose()

    async def _read_stream(
        self, response: HttpResponse, host: str, decoder: StreamDecoder
    ) -> AsyncGenerator[ModelEvent | _Retry, None]:
        parser = SseParser()
        chunks = response.aiter_bytes()
        head = bytearray()  # the start of the body, to describe one that is not SSE
        seen_event = yielded = False
        try:
            while True:
                try:
                    async with asyncio.timeout(self.idle_timeout_s):
                        chunk = await anext(chunks)
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    yield Failed(f"{host} sent nothing for {self.idle_timeout_s:g} s "
                                 "mid-answer; raise idleTimeoutMs if the model is that slow",
                                 "idle_timeout")
                    return
                except TransportError as exc:
                    when = "mid-answer" if yielded else "before the answer began"
                    failure = Failed(f"the connection to {host} was cut {when} ({exc})",
                                     "connection")
                    yield failure if yielded else _Retry(failure)
                    return
                if not seen_event and len(head) < 4096:
                    head += chunk[:4096]
                try:
                    events = parser.feed(chunk)
                except SseEventTooLarge as exc:
                    yield Failed(f"{host} sent {exc}; the answer was stopped", "bad_response")
                    return
                for sse in events:
                    seen_event = True
                    for event in decoder.feed(sse):
                        yield event
                        yielded = True
                        if isinstance(event, Done | Failed):
                            return
        finally:
            # An async generator left suspended would be closed later by the GC.
            close = getattr(chunks, "aclose", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    await close()
        parser.close()
        if not seen_event and head.strip():
            yield Failed(f"{host} did not answer with an event stream: "
                         f"{error_detail(bytes(head))}", "bad_response")
            return
        final = decoder.end()
        # Nothing reached the caller yet, so a short body is as good as a cut connection.
        yield _Retry(final) if isinstance(final, Failed) and not yielded else final

    async def _http_error(
        self, request: HttpRequest, response: HttpResponse, host: str
    ) -> Failed | _Retry:
        body = bytearray()
        try:
            async with asyncio.timeout(self.idle_timeout_s):
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) >= _MAX_ERROR_BODY:
                        break
        except (TransportError, TimeoutError):
            pass  # the error body is best effort: describe what arrived
        failure = http_failure(response.status, error_detail(bytes(body)), request.url,
                               self.model_name)
        if response.status in RETRYABLE_STATUS:
            return _Retry(failure, parse_retry_after(response.headers))
        return failure


def http_failure(status: int, detail: str, url: str, model: str) -> Failed:
    """The Failed for an HTTP error status: what happened, and what to do about it."""
    host = urlsplit(url).netloc or url
    said = f"HTTP {status}: {detail}" if detail else f"HTTP {status} {_phrase(status)}"
    code = f"http_{status}"
    if status in (401, 403):
        fix = "check apiKey in the model options"
        if status == 403:
            fix += f", and that the key may use the model '{model}'"
        return Failed(f"the API key was rejected by {host} ({said}): {fix}", code)
    if status == 404:
        return Failed(f"{url} was not found ({said}): check baseUrl and the model name "
                      f"'{model}'", code)
    if status == 400:
        return Failed(f"{host} rejected the request ({said})", code)
    if status == 429:
        return Failed(f"rate limited by {host} ({said}): wait and try again, or send fewer "
                      "requests", code)
    if status >= 500:
        return Failed(f"{host} is unavailable or overloaded ({said}): try again later", code)
    return Failed(f"{host} answered {said}", code)


def _phrase(status: int) -> str:
    if status == 529:
        return "Overloaded"  # Anthropic's, not in the HTTP registry
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def error_detail(body: bytes) -> str:
    """One readable line from an error body: the message of a JSON error (OpenAI or
    Anthropic shape, or a plain ``message``/``detail``), the title or text of an HTML
    page (never raw HTML), or the text itself; truncated; "" for an empty body."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return ""
    try:
        message = _json_error_message(loads_bounded(text, "error body", len(text)))
    except ValueError:
        message = None
    if message:
        return _one_line(message)
    if text.startswith("<"):
        return _html_summary(text)
    return _one_line(text)


def _json_error_message(data: Any) -> str | None:
    if isinstance(data, list) and data:  # some gateways wrap the error in a list
        return _json_error_message(data[0])
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, str) and error:
        return error
    if isinstance(error, dict):
        message, kind = error.get("message"), error.get("type")
        if isinstance(message, str) and message:
            return f"{message} ({kind})" if isinstance(kind, str) and kind else message
    for key in ("message", "detail"):
        if isinstance(data.get(key), str) and data[key]:
            return str(data[key])
    return None


_MAX_HTML_SCANNED = 8 * 1024
"""The start of an HTML error page that is summarised: the lazy scans below cost up to
(tags x length), 2 to 5 s over a hostile 64 KB page, about 40 ms over 8 KB."""


def _html_summary(text: str) -> str:
    text = text[:_MAX_HTML_SCANNED]
    title = re.search(r"<title[^>]*>(.*?)</title\s*>", text, re.IGNORECASE | re.DOTALL)
    if title and title.group(1).strip():
        return _one_line(html.unescape(title.group(1)))
    text = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", text, flags=re.IGNORECASE | re.DOTALL)
    text = re.sub(r"<!--.*?-->|<[^<>]*>", " ", text, flags=re.DOTALL)
    return _one_line(html.unescape(text)) or "an HTML page"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


def parse_retry_after(
    headers: Mapping[str, str], now: Callable[[], float] = time.time
) -> float | None:
    """Seconds to wait, from ``retry-after-ms`` (OpenAI) or ``Retry-After`` (seconds or
    an HTTP date); None when absent or unreadable. Not capped here."""
    value = headers.get("retry-after-ms")
    if value is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(value) / 1000)
    value = headers.get("retry-after")
    if value is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now())


def json_body(payload: dict[str, Any]) -> bytes:
    """The request body: compact UTF-8 JSON (non-ASCII text kept as is). A lone
    surrogate that reached the history anyway becomes U+FFFD rather than making every
    later request impossible to build."""
    return clean_text(json.dumps(payload, ensure_ascii=False, separators=(",", ":"))).encode()


def parse_event_json(event: SseEvent, host: str) -> dict[str, Any] | Failed:
    """The JSON object in an event's data, or the Failed that says it was unreadable
    (also when it is nested too deep to parse safely)."""
    try:
        data = loads_bounded(event.data, "stream event", len(event.data), MAX_JSON_DEPTH)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return Failed(f"{host} sent an unreadable stream event: {_one_line(event.data)}",
                      "bad_response")
    return data


def stream_failure(error: Any, host: str) -> Failed:
    """The Failed for an error the provider reported inside the stream (either shape:
    ``{"message", "type"|"code"}`` or a plain string)."""
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        kind = error.get("type") or error.get("code")
        if kind:
            message = f"{message} ({kind})"
    else:
        message = str(error)
    return Failed(f"{host} reported an error mid-answer: {_one_line(message)}", "stream_error")


class HttpModel:
    """The :class:`~harness.models.base.Model` shape both wire APIs share: one
    :class:`HttpStreamer` configured from the page's options; a subclass says how to
    build its request and decode its stream."""

    def __init__(
        self,
        config: ProviderConfig,
        transport: Transport,
        sleep: Sleep = asyncio.sleep,
        backoff: Backoff | None = None,
    ) -> None:
        self.config = config
        self._http = HttpStreamer(
            transport, model_name=config.model, max_retries=config.max_retries,
            idle_timeout_s=config.idle_timeout_ms / 1000, backoff=backoff, sleep=sleep,
        )

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        host = urlsplit(self.config.base_url).netloc or self.config.base_url
        async for event in self._http.stream(lambda: self.build_request(request),
                                             lambda: self.decoder(host)):
            yield event

    def build_request(self, request: ModelRequest) -> HttpRequest:
        """The HTTP request for one model request (public for tests and debugging)."""
        raise NotImplementedError

    def decoder(self, host: str) -> StreamDecoder:
        """A fresh decoder for one response of ``host``."""
        raise NotImplementedError
