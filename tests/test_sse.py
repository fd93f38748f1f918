"""The SSE parser against the WHATWG rules and recorded provider streams.

No sockets: runs on CPython and inside Pyodide. The recorded streams in fixtures/ were
captured from tooling.provider_server (real OpenAI / Anthropic event sequences,
with multi-byte characters in text and tool arguments).
"""

import json
from pathlib import Path

import pytest

from harness.models.sse import SseEvent, SseParser

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = ["openai_chat.sse", "anthropic_messages.sse"]


def parse(*chunks: bytes) -> list[SseEvent]:
    parser = SseParser()
    events = [e for chunk in chunks for e in parser.feed(chunk)]
    parser.close()
    return events


STREAM = "event: a\ndata: one\ndata: two\n\n: keep-alive\n\ndata: three\n\n"
EXPECTED = [SseEvent("a", "one\ntwo"), SseEvent(None, "three")]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_every_line_ending_style(newline):
    assert parse(STREAM.replace("\n", newline).encode()) == EXPECTED


def test_mixed_line_endings_in_one_stream():
    assert parse(b"event: a\r\ndata: one\rdata: two\n\r\n: c\r\rdata: three\n\r") == EXPECTED


def test_cr_at_chunk_end_and_lf_at_next_start_is_one_line_end():
    # Read as two line ends, the empty line between them would dispatch "a" alone.
    assert parse(b"data: a\r", b"\ndata: b\r\n\r\n") == [SseEvent(None, "a\nb")]
    # And a CR that is a line end on its own is still one when nothing follows yet.
    assert parse(b"data: a\r", b"\r") == [SseEvent(None, "a")]


def test_cr_then_partial_character_then_lf_is_not_skipped_wrongly():
    # The chunk after the CR decodes to nothing yet (half a character); the LF rule
    # must wait for real text: here the next text starts with "é", not LF.
    assert parse(b"data: a\r", b"data: \xc3", b"\xa9\r\n\r\n") == [SseEvent(None, "a\n\u00e9")]


def test_comments_are_ignored():
    assert parse(b":\n: comment\n:data: x\ndata: y\n\n") == [SseEvent(None, "y")]


def test_single_leading_space_removed_only():
    assert parse(b"data:  two spaces\ndata:none\ndata: \n\n") == [
        SseEvent(None, " two spaces\nnone\n")
    ]


def test_field_without_colon_has_empty_value():
    assert parse(b"data\ndata\n\n") == [SseEvent(None, "\n")]
    assert parse(b"event\ndata: x\n\n") == [SseEvent(None, "x")]


def test_event_without_data_is_not_dispatched_and_type_resets():
    assert parse(b"event: ping\n\ndata: x\n\n") == [SseEvent(None, "x")]


def test_unknown_fields_and_retry_are_ignored():
    parser = SseParser()
    assert parser.feed(b"foo: bar\nretry: 2500\nretry: soon\ndata: x\n\n") == [
        SseEvent(None, "x")
    ]


def test_last_event_id_carries_over_and_nul_ids_are_ignored():
    events = parse(b"id: 7\ndata: a\n\ndata: b\n\nid: 8\x00\ndata: c\n\nid\ndata: d\n\n")
    assert [(e.data, e.id) for e in events] == [("a", "7"), ("b", "7"), ("c", "7"), ("d", "")]
    assert parse(b"data: a\n\n")[0].id is None


def test_leading_bom_dropped_even_split():
    assert parse(b"\xef\xbb", b"\xbfdata: x\n\n") == [SseEvent(None, "x")]
    # Only the first one: a second BOM is content (as a field name it is unknown).
    assert parse(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\n") == []


def test_unfinished_final_event_is_discarded_and_reported():
    parser = SseParser()
    assert parser.feed(b"data: complete\n\ndata: cut") == [SseEvent(None, "complete")]
    assert parser.close() is True
    parser = SseParser()
    assert parser.feed(b"data: x\n") == []
    assert parser.close() is True  # a data line but no blank line: still discarded
    parser = SseParser()
    parser.feed(b"data: x\n\n")
    assert parser.close() is False


def test_invalid_utf8_becomes_replacement_character():
    assert parse(b"data: a\xffb\n\n") == [SseEvent(None, "a\ufffdb")]


def test_multibyte_characters_split_at_every_byte():
    text = "é ✓ 日本 🤔"
    raw = f"data: {text}\n\n".encode()
    for cut in range(1, len(raw)):
        assert parse(raw[:cut], raw[cut:]) == [SseEvent(None, text)], cut
    assert parse(*[raw[i : i + 1] for i in range(len(raw))]) == [SseEvent(None, text)]


@pytest.fixture(params=RECORDED)
def recorded(request):
    return (FIXTURES / request.param).read_bytes()


def test_recorded_stream_parses(recorded):
    events = parse(recorded)
    assert len(events) > 20
    # Every event carries JSON except OpenAI's sentinel.
    assert all(e.data == "[DONE]" or json.loads(e.data) for e in events)
    text = "".join(json.loads(e.data).get("delta", {}).get("text", "") for e in events
                   if e.event == "content_block_delta")
    text += "".join((json.loads(e.data).get("choices") or [{}])[0].get("delta", {})
                    .get("content") or "" for e in events if e.event is None and e.data[0] == "{")
    assert text == "Héllo wörld — ✓ 日本語 done."


def test_recorded_stream_split_at_every_offset(recorded):
    whole = parse(recorded)
    for cut in range(1, len(recorded)):
        assert parse(recorded[:cut], recorded[cut:]) == whole, cut


def test_recorded_stream_in_one_byte_chunks(recorded):
    assert parse(*[recorded[i : i + 1] for i in range(len(recorded))]) == parse(recorded)


@pytest.mark.parametrize("newline", [b"\r\n", b"\r"])
def test_recorded_stream_with_other_line_endings(recorded, newline):
    # The recorded JSON has no raw newlines inside data, so this is a faithful rewrite.
    converted = recorded.replace(b"\n", newline)
    whole = parse(recorded)
    assert parse(converted) == whole
    for cut in range(1, len(converted), 7):
        assert parse(converted[:cut], converted[cut:]) == whole, cut
