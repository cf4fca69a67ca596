"""A JSON body that does not decode says why, whichever way the decoder reports it."""

from __future__ import annotations

import pytest

from app.errors import BadRequestError
from app.protocols.chat_request import decode_request
from app.web.http import parse_json


@pytest.mark.parametrize("decode", [parse_json, decode_request], ids=["api", "chat"])
@pytest.mark.parametrize(("body", "code"), [
    (b'{"model": "m", "messages": [{"role": "user", "content": "\xff\xfe"}]}', "not_utf8"),
    (b'{"model": "m", "messages": [', "invalid_json"),
], ids=["not-utf8", "cut-off"])
def test_a_body_that_does_not_decode_is_named_for_why(decode, body, code) -> None:
    # msgspec 0.23 reports bad UTF-8 as a DecodeError ("Invalid UTF-8 encoded string"), earlier versions
    # raised UnicodeDecodeError: the API's code is the same either way.
    with pytest.raises(BadRequestError) as raised:
        decode(body)
    assert raised.value.code == code and "JSON" in str(raised.value.detail)
    assert ("UTF-8" in str(raised.value.detail)) == (code == "not_utf8")
