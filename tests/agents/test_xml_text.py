"""An XML document is read by its elements' text, not its markup: "Who is the creator of the document?"
over the corpus file `testXML.xml` quoted "<oaidc:dc xmlns:dc=... <dc:creator>Rida Benjelloun</dc:creator>
..." for both parts of the question. Each element with text is a line "name: text"; a file that does not
parse is read as written."""

from __future__ import annotations

from agents.toolkit.markup import xml_lines
from tests.agents.conftest import load_document, offline_answer


async def test_the_creator_of_an_xml_record_is_quoted_without_markup():
    doc = load_document("testXML.xml")
    assert "creator: Rida Benjelloun" in doc.text and "xmlns" not in doc.text and "<" not in doc.text
    question = "Who is the creator of the document?"
    text = await offline_answer(question, [doc], "en")
    assert "Rida Benjelloun" in text and "<dc:" not in text, text


def test_attributes_mixed_text_and_what_does_not_parse():
    assert xml_lines('<a><item id="3" price="4.50"/><p>Hello <b>big</b> world</p><!-- no --></a>') == \
        "item: id=3, price=4.50\np: Hello\nb: big\nworld"
    assert xml_lines("<a><unclosed></a>") is None
    bomb = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
            '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
            '<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]><x>&h;</x>')
    assert xml_lines(bomb) is None  # expat refuses the expansion: read as written
