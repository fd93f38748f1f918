"""The CPython runtime: messages go to a callback, HTTP goes through httpx."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..transport import HttpxTransport, Transport
from . import PageToolCaller


class NativeRuntime:
    def __init__(self, on_message: Callable[[dict[str, Any]], None] | None = None,
                 transport: Transport | None = None,
                 page_tools: PageToolCaller | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self._on_message = on_message
        self._transport = transport
        self._page_tools = page_tools

    def post(self, message_json: str) -> None:
        message = json.loads(message_json)
        self.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)

    @property
    def transport(self) -> Transport:
        if self._transport is None:
            self._transport = HttpxTransport()
        return self._transport

    @property
    def page_tools(self) -> PageToolCaller | None:
        return self._page_tools
