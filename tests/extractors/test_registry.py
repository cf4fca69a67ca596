"""The registry: explicit registration, no duplicates, and a result for every input."""

from __future__ import annotations

import pytest

from extractors import ContentItem, DuplicateExtractorError, Extraction, build_registry, extract
from extractors.text import extract_text


def test_a_second_extractor_for_the_same_type_is_rejected():
    registry = build_registry()
    with pytest.raises(DuplicateExtractorError, match="application/pdf"):
        registry.add(["application/x-new", "application/pdf"], extract_text)
    # A rejected list registers nothing, not even its new types.
    assert "application/x-new" not in registry.mimes()


def test_a_plug_in_is_added_the_same_way_as_the_built_ins():
    registry = build_registry()
    registry.add("application/x-plugin", lambda source, _: Extraction(mime=source.mime, status="ok"))
    assert registry.extract(b"anything", "a.bin", mime="application/x-plugin").status == "ok"


def test_an_extractor_that_raises_becomes_a_corrupt_result(caplog):
    def explode(source, registry):
        raise RuntimeError("parser fell over")

    registry = build_registry()
    registry.add("application/x-fragile", explode)
    with caplog.at_level("INFO", logger="extractors.registry"):
        result = registry.extract(b"data", "fragile.bin", mime="application/x-fragile")
    assert result.status == "corrupt"
    # A sentence for the person; the exception's text only in the server log.
    assert "damaged" in result.items[0].data and "fragile.bin" in result.warnings[0]
    assert "parser fell over" not in result.items[0].data + " ".join(result.warnings)
    assert "RuntimeError" not in result.items[0].data
    assert "parser fell over" in caplog.text


def test_library_objects_in_metadata_become_plain_data():
    from pypdf.generic import FloatObject, NameObject, NumberObject, TextStringObject

    def odd(source, registry):
        item = ContentItem(1, TextStringObject("page 1"), "txt", "text/plain", TextStringObject("text"),
                           metadata={"attachment": TextStringObject("foo.txt"), "n": NumberObject(3),
                                     "x": FloatObject(1.5), NameObject("/K"): [NameObject("/V")]})
        return Extraction(mime=source.mime, status="ok", items=[item])

    registry = build_registry()
    registry.add("application/x-odd", odd)
    [item] = registry.extract(b"data", "odd.bin", mime="application/x-odd").items
    assert item.metadata == {"attachment": "foo.txt", "n": 3, "x": 1.5, "/K": ["/V"]}
    assert all(type(v) in (str, int, float, list) for v in item.metadata.values())
    assert type(item.name) is str and type(item.data) is str


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00" * 100, b"%PDF-1.4", b"PK\x03\x04broken", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600],
)
def test_odd_bytes_never_raise(data):
    result = extract(data, "odd")
    assert result.status in {"ok", "corrupt", "unsupported"}
    assert result.items


def test_unknown_formats_are_kept_as_bytes_with_a_warning_naming_them():
    result = extract(b"\x00\x01\x02\x03binary", "blob.bin")
    assert result.status == "unsupported"
    assert result.items[0].is_text is False
    assert result.items[0].base64_encoded is True
    assert "application/octet-stream" in result.warnings[0]


def test_the_caller_may_name_the_type():
    result = extract(b"a,b\n1,2\n", "x", mime="text/csv")
    assert result.mime == "text/csv"
    assert result.items[0].data == "a\tb\n1\t2"
