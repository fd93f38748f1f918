"""The HTTP transport seam the model adapters send through (in the spirit of httpx's).

A :class:`Transport` sends one request and hands back the response as soon as its status
and headers are in; the body streams from :meth:`HttpResponse.aiter_bytes`. The
adapters only ever see this interface: on CPython it is :class:`HttpxTransport`; in the
browser worker it is a ``fetch``-based transport (kept with the runtime seam, the only
code that touches JS).

Contract for implementations:

- ``send`` raises :class:`TransportError` when no response arrives (refused, reset, DNS,
  TLS, CORS in the browser). Any HTTP status, 500 included, is a response, not an error.
- Reading the body may raise :class:`TransportError` (the connection was cut).
- ``aclose`` releases the connection; it is safe to call more than once and after the
  body was read to the end. The caller always calls it.
- ``asyncio.CancelledError`` passes through untouched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .errors import HarnessError

if TYPE_CHECKING:  # httpx is imported lazily: the browser build does not need it.
    import httpx


class TransportError(HarnessError):
    """No usable response: the connection failed or was cut. The message says why."""


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes


class HttpResponse(Protocol):
    status: int
    headers: Mapping[str, str]
    """Response headers with lower-case names."""

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, in chunks cut at arbitrary byte boundaries. Iterate it once."""
        ...

    async def aclose(self) -> None: ...


class Transport(Protocol):
    async def send(self, request: HttpRequest) -> HttpResponse: ...


class HttpxTransport:
    """:class:`Transport` over ``httpx.AsyncClient`` streaming, for CPython.

    The client is created on first use, so build the transport anywhere and use it
    inside one event loop. By default there is no read timeout: the model adapters
    enforce their own idle timeout, which works the same with every transport.
    """

    def __init__(
        self,
        *,
        connect_timeout_s: float = 10.0,
        read_timeout_s: float | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self._connect_timeout_s = connect_timeout_s
        self._read_timeout_s = read_timeout_s
        self._client = client

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            timeout = httpx.Timeout(
                connect=self._connect_timeout_s, read=self._read_timeout_s,
                write=self._connect_timeout_s, pool=self._connect_timeout_s,
            )
            self._client = httpx.AsyncClient(timeout=timeout)
        return self._client

    async def send(self, request: HttpRequest) -> HttpResponse:
        import httpx

        client = self._get_client()
        built = client.build_request(
            request.method, request.url, headers=request.headers, content=request.body
        )
        try:
            response = await client.send(built, stream=True)
        except httpx.HTTPError as exc:
            raise TransportError(_describe(exc)) from exc
        return _HttpxResponse(response)

    async def aclose(self) -> None:
        """Close the client and its pooled connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


class _HttpxResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status = response.status_code
        # httpx joins repeated headers with ", ", as fetch does.
        self.headers: Mapping[str, str] = {k.lower(): v for k, v in response.headers.items()}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        import httpx

        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
        except httpx.HTTPError as exc:
            raise TransportError(_describe(exc)) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


def _describe(exc: Exception) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
