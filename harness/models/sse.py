"""An incremental Server-Sent Events parser, per the WHATWG HTML "event stream" rules.

Feed it the response body in chunks cut at any byte; it returns the events completed so
far. What it handles, and why each matters for model streams:

- Lines end with CRLF, LF or a lone CR. A CR at the end of one chunk followed by an LF at
  the start of the next is *one* line ending (not an extra empty line, which would
  dispatch an event early).
- UTF-8 is decoded incrementally, so a character split across chunks arrives whole; a
  leading byte-order mark is dropped and invalid bytes become U+FFFD, as the spec says.
- ``:`` starts a comment (servers send them as keep-alives); a line without a colon is a
  field with an empty value; one space after the colon is removed; several ``data``
  lines are joined with ``"\\n"``; a blank line dispatches; an event without data is
  not dispatched.
- End of stream: the spec discards an event that was not closed by a blank line, and so
  does :meth:`SseParser.close`; it reports whether it discarded one, so an adapter can
  say the stream was cut. (Providers always end events with a blank line.)

Sentinels such as OpenAI's ``data: [DONE]`` are ordinary events here; they are the
adapter's concern.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from ..limits import MAX_SSE_EVENT_CHARS

_LINE_END = re.compile(r"\r\n|\r|\n")


class SseEventTooLarge(ValueError):
    """An event (or a line) grew past :data:`~harness.limits.MAX_SSE_EVENT_CHARS`."""


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event.

    ``event`` is the ``event:`` field, or ``None`` when the event had none (the spec
    calls that type ``"message"``). ``id`` is the stream's last event id when the event
    was dispatched (it carries over from earlier events, as in the browser's
    ``lastEventId``), or ``None`` if no ``id:`` field was ever seen.
    """

    event: str | None
    data: str
    id: str | None = None


class SseParser:
    """Turns byte chunks into :class:`SseEvent` s. One parser per response body."""

    def __init__(self) -> None:
        # utf-8-sig drops one leading BOM, even when it is split across chunks.
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._partial: list[str] = []  # text of the current, unfinished line
        self._skip_lf = False  # the last chunk ended with CR: an LF next is part of it
        self._data: list[str] = []
        self._event_type = ""
        self._last_id: str | None = None
        self._held = 0  # characters of data held for the current event
        self._partial_len = 0  # characters of the unfinished line

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse one more piece of the body; return the events it completed, in order."""
        return self._feed_text(self._decoder.decode(chunk))

    def close(self) -> bool:
        """End of stream. Returns True if an unfinished event (or line) was discarded."""
        self._feed_text(self._decoder.decode(b"", final=True))
        pending = bool(self._partial) or bool(self._data)
        self._partial.clear()
        self._data.clear()
        self._event_type = ""
        self._held = self._partial_len = 0
        return pending

    def _feed_text(self, text: str) -> list[SseEvent]:
        if not text:  # e.g. only the first bytes of a multi-byte character arrived
            return []
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = text.endswith("\r")
        out: list[SseEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            self._partial.append(text[start : match.start()])
            line = "".join(self._partial)
            self._partial.clear()
            self._partial_len = 0
            self._process_line(line, out)
            start = match.end()
        if start < len(text):
            self._partial.append(text[start:])
            self._partial_len += len(text) - start
            self._check_size()
        return out

    def _check_size(self) -> None:
        # A server that never ends a line or an event must not fill the memory.
        if self._held + self._partial_len > MAX_SSE_EVENT_CHARS:
            raise SseEventTooLarge(f"a stream event over {MAX_SSE_EVENT_CHARS:,} characters")

    def _process_line(self, line: str, out: list[SseEvent]) -> None:
        if line == "":
            self._dispatch(out)
            return
        if line.startswith(":"):
            return  # a comment
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._held += len(value)
            self._check_size()
        elif name == "event":
            self._event_type = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        # Any other field name is ignored, as the spec says; so is ``retry`` (the time
        # before a reconnection: a model's stream is never reconnected, it is retried
        # whole by the HTTP layer, before its first delta).

    def _dispatch(self, out: list[SseEvent]) -> None:
        event_type, self._event_type = self._event_type, ""
        self._held = 0
        if not self._data:
            return  # the spec: no data, no event (the event type is reset all the same)
        data = "\n".join(self._data)
        self._data.clear()
        out.append(SseEvent(event_type or None, data, self._last_id))
