"""The CPython runtime: messages go to a callback (a list, stdout, a test)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class NativeRuntime:
    def __init__(self, on_message: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self._on_message = on_message

    def post(self, message_json: str) -> None:
        message = json.loads(message_json)
        self.messages.append(message)
        if self._on_message is not None:
            self._on_message(message)
