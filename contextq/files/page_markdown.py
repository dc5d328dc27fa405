"""A part of a parsed web page → markdown, with markdownify over BeautifulSoup's lxml parser.

The same conversion markitdown's HTML converter makes (markdownify, `#` headings, no
`javascript:` links, no data: URIs), without what it costs on a page we have already
parsed and pruned: its file-type sniffing model and BeautifulSoup's pure-Python parser
took 18 ms of a 22 ms conversion of a results page, this 4 ms. Underscores are not
escaped (`user_name`, `MAX_LINES` read as they are written). A page nested too deeply
for markdownify's recursion becomes its plain text, block by block.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

import markdownify

from contextq.files.page_layout import norm

_HEADING = re.compile(r"\s*(#{1,6} )?(.+)")


class _PageMarkdown(markdownify.MarkdownConverter):
    def __init__(self) -> None:
        super().__init__(heading_style=markdownify.ATX, escape_underscores=False)

    def convert_a(self, el: Any, text: str, parent_tags: set[str]) -> str:
        href = el.get("href") or ""
        scheme = urlparse(href).scheme.lower() if href else ""
        if scheme and scheme not in ("http", "https"):
            return str(text)  # javascript:, mailto:, data: … — the words alone
        if href and "\n" in text.strip():  # a link around blocks: a result's heading and URL
            return _linked_first_line(text, href)
        return str(super().convert_a(el, text, parent_tags))  # type: ignore[misc]

    def convert_img(self, el: Any, text: str, parent_tags: set[str]) -> str:
        alt = norm(el.get("alt") or "")
        return f"[image: {alt}]" if alt else ""


def _linked_first_line(text: str, href: str) -> str:
    """`### Title` and the lines below it, the title linked: `### [Title](href)`."""
    lines = text.strip().split("\n")
    first = _HEADING.match(lines[0])
    marks, words = (first.group(1), first.group(2)) if first else ("", lines[0].strip())
    lines[0] = f"{marks}[{words}]({href})"
    return "\n\n" + "\n".join(lines) + "\n\n"


def element_markdown(element: Any) -> str:
    from bs4 import BeautifulSoup  # noqa: PLC0415 - BeautifulSoup, for web pages only
    from lxml import html as lxml_html  # noqa: PLC0415

    markup = lxml_html.tostring(element, encoding="unicode")
    soup = BeautifulSoup(markup, "lxml")
    try:
        text = _PageMarkdown().convert_soup(soup)
    except RecursionError:
        text = "\n\n".join(norm(t) for t in element.itertext() if t.strip())
    return str(text).strip()
