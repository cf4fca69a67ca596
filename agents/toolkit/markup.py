"""An XML document's text as agents read it: a line per element that holds text, "name: text".

The XML extractor keeps a file as written, markup and all, and answers quoted it so: "<oaidc:dc
xmlns:dc=... <dc:title>Tika test document</dc:title> <dc:creator>Rida Benjelloun</dc:creator> ..." for
"Who is the creator?" over the corpus file `testXML.xml`. Read for agents, each element with text of its
own gives one line named by its local name ("creator: Rida Benjelloun"), an element with attributes and
no text lists them ("item: id=3, price=4.50"); comments, processing instructions and namespace
declarations are not text. A file that does not parse stays as written. Python's expat refuses external
entities and, since 2.4, entity expansion beyond a bound ("billion laughs"). Pure.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

MAX_XML_CHARS = 20_000_000  # a larger file is read as written: a tree of it would cost more than its text


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def xml_lines(text: str) -> str | None:
    """The lines of an XML text, or None when it is no well-formed XML."""
    if len(text) > MAX_XML_CHARS:
        return None
    try:
        root = ElementTree.fromstring(text.encode("utf-8"))
    except (ElementTree.ParseError, ValueError):
        return None
    lines: list[str] = []
    for element in root.iter():
        if not isinstance(element.tag, str):  # a comment or processing instruction
            continue
        own = " ".join((element.text or "").split())
        if own:
            lines.append(f"{_local(element.tag)}: {own}")
        elif element.attrib and not len(element):
            lines.append(f"{_local(element.tag)}: " + ", ".join(f"{_local(k)}={v}" for k, v in element.attrib.items()))
        tail = " ".join((element.tail or "").split())
        if tail and element is not root:
            lines.append(tail)
    return "\n".join(lines)
