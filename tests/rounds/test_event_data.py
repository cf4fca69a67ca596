"""An event's data is one line for every reader: JSON leaves U+0085, U+2028 and U+2029 raw, and a
reader that splits lines like str.splitlines (httpx's iter_lines) would cut the event there. PDFs
carry them (tracemonkey.pdf has 18 paragraph separators); models write them."""

from __future__ import annotations

import json

import msgspec

from app.rounds.live import event_data, frame, one_line

TEXT = "one\u2028two\u2029three\x85four\r\nfive\x0csix \u00e9\u00e8 \u20ac \U0001f600"


def test_the_data_of_an_event_is_one_line_for_a_splitlines_reader_and_parses_to_the_same_value():
    value = {"content": TEXT, "list": [TEXT], "n": 1}
    data = event_data(value)
    assert len(data.decode().splitlines()) == 1
    assert json.loads(data) == msgspec.json.decode(data) == value
    event = frame("message", "1-2", data).decode()
    assert event.splitlines() == ["event: message", "id: 1-2", "data: " + data.decode(), ""]


def test_one_line_leaves_every_other_character_as_msgspec_wrote_it():
    plain = msgspec.json.encode({"text": "Grüße, 12 € — «ok» \u2027 \u202f"})
    assert one_line(plain) == plain
    escaped = one_line(msgspec.json.encode("\u2028"))
    assert escaped == b'"\\u2028"'
