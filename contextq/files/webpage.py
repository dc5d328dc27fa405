"""Saved web pages → the markdown of their main content, not their menus.

trafilatura (offline: it is given the page, never a URL) finds the article: headings,
paragraphs, lists, tables and links, without navigation, sidebars, language lists,
footers and cookie banners. When it finds too little of the page to be the content
(a search-results page, an index), the whole page goes through markitdown's HTML
converter instead. Either way, tracking redirect links are unwrapped to their targets
or dropped first (`links.clean_link`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contextq.errors import InvalidInput
from contextq.files import mdconvert
from contextq.files.links import clean_link

# the main content must hold this many characters to stand for the page (a short page
# has no chrome worth removing, and a search-results page has no single main part)
MAIN_MIN_CHARS = 400
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Webpage:
    markdown: str
    extraction: str  # "main content" | "whole page"
    title: str | None
    url: str | None
    page_chars: int  # visible text of the whole page
    links_unwrapped: int
    links_dropped: int


def convert_webpage(data: bytes) -> Webpage:
    tree = _parse(data)
    unwrapped, dropped = _clean_links(tree)
    title = _title(tree)
    url = _canonical_url(tree)
    page_chars = len(_SPACES.sub(" ", _visible_text(tree)).strip())
    main = _main_content(tree)
    if main and len(main) >= MAIN_MIN_CHARS:
        if title and not main.lstrip().startswith("#"):
            main = f"# {title}\n\n{main}"
        return Webpage(main, "main content", title, url, page_chars, unwrapped, dropped)
    from lxml import html as lxml_html

    whole = mdconvert.convert(lxml_html.tostring(tree, encoding="utf-8"), "html")
    return Webpage(whole, "whole page", title, url, page_chars, unwrapped, dropped)


def _parse(data: bytes) -> Any:
    from lxml import etree
    from trafilatura.utils import load_html

    try:
        tree = load_html(data)
    except (etree.LxmlError, ValueError) as exc:
        raise InvalidInput(f"this HTML page could not be parsed ({exc})") from exc
    if tree is None:
        raise InvalidInput("this HTML file holds no HTML document")
    return tree


def _clean_links(tree: Any) -> tuple[int, int]:
    unwrapped = dropped = 0
    for anchor in tree.iter("a"):
        href = anchor.get("href")
        if not href:
            continue
        cleaned = clean_link(href)
        if cleaned is None:
            del anchor.attrib["href"]
            dropped += 1
        elif cleaned != href.strip():
            anchor.set("href", cleaned)
            unwrapped += 1
    return unwrapped, dropped


def _title(tree: Any) -> str | None:
    for xpath in ('//meta[@property="og:title"]/@content', "//title/text()", "//h1//text()"):
        found = [t.strip() for t in tree.xpath(xpath) if t.strip()]
        if found:
            return _SPACES.sub(" ", found[0])[:300]
    return None


def _canonical_url(tree: Any) -> str | None:
    for xpath in ('//link[@rel="canonical"]/@href', '//meta[@property="og:url"]/@content'):
        found = [u.strip() for u in tree.xpath(xpath) if u.strip().startswith("http")]
        if found:
            return str(found[0])[:2000]
    return None


def _visible_text(tree: Any) -> str:
    return " ".join(tree.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]"))


def _main_content(tree: Any) -> str | None:
    import copy

    import trafilatura

    text = trafilatura.extract(
        copy.deepcopy(tree),  # trafilatura prunes the tree it is given
        output_format="markdown",
        include_tables=True,
        include_links=True,
        include_formatting=True,
        include_images=False,
        include_comments=False,
        favor_precision=True,
        deduplicate=False,
        with_metadata=False,
    )
    return text.strip() if text else None
