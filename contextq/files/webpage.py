"""Saved web pages → the markdown of their content, not their menus, saying what was left out.

The kind of page decides what its content is (`page_layout.analyse`): a search-results
page, a forum thread or a product listing is its items, every one of them; an article
(an encyclopedia entry, a news story, a documentation page) is the main content
trafilatura finds (offline: it is given the page, never a URL), without navigation,
sidebars, language lists, footers and cookie banners — unless that main content misses
much of the page's text outside its chrome, in which case the page's content is taken
instead. Page content is the visible page without its chrome, through markitdown's
HTML converter; a page that is all chrome goes whole. Tracking redirect links are
unwrapped to their targets or dropped first (`links.clean_link`).

Whatever is not sent is said: `truncation()` gives the visible characters kept of the
page's and the blocks left out by kind (`page chars: 1299 of 11024, 9 blocks left out
(navigation, link list, footer, …)`); the whole page stays in the raw file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

from contextq.errors import InvalidInput
from contextq.files.links import clean_link
from contextq.files.page_layout import Layout, analyse, drop, norm

# the main content must hold this many characters to stand for the page (a short page
# has no chrome worth removing)
MAIN_MIN_CHARS = 400
# ... and this share of the text outside the chrome: an "article" whose main content
# misses more is a page of several parts, sent as its content
MAIN_MIN_SHARE = 0.5
OUTSIDE_MAIN = "text outside the main content"
_SPACES = re.compile(r"\s+")
_SAVED_FROM = re.compile(rb"<!-- saved from url=\(\d+\)(https?://[^ >]+) -->")
_BLOCK_TAGS = ("p", "li", "td", "th", "dd", "dt", "pre", "blockquote", "figcaption", "caption")
_ESCAPED_UNDERSCORE = re.compile(r"(?<=\w)\\_(?=\w)")
_PERMALINK_TEXT = frozenset({"¶", "#", "§", "🔗", "link"})
_WORDLESS = re.compile(r"\W+")
_MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MD_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>])")
_MD_SYNTAX = re.compile(r"^\s*(?:#+|>|[-+*]|\d+\.)\s+|^[|:\- ]+$|\*\*?|`+|\|", re.M)


@dataclass(frozen=True)
class Webpage:
    markdown: str
    extraction: str  # "main content" | "page content" | "whole page"
    title: str | None
    url: str | None
    page_chars: int  # visible text of the whole page
    links_unwrapped: int
    links_dropped: int
    kind: str = "article"  # "search results" | "forum thread" | "listing" | "article"
    kept_chars: int = 0  # visible text of the page that the markdown holds
    left_out: dict[str, int] = field(default_factory=dict)  # kind of block → blocks

    def truncation(self) -> dict[str, Any]:
        """What extraction left out, in `TruncationInfo`'s terms (empty when nothing)."""
        if self.kept_chars >= self.page_chars:
            return {}
        blocks = sum(self.left_out.values())
        names = sorted(self.left_out, key=lambda k: (-self.left_out[k], k))
        counts = {f"blocks left out ({', '.join(names)})": blocks} if blocks else {}
        return {
            "shown": {"page chars": self.kept_chars},
            "total": {"page chars": self.page_chars},
            "counts": counts,
        }


def convert_webpage(data: bytes) -> Webpage:
    tree = _parse(data)
    unwrapped, dropped = _clean_links(tree)
    title = _title(tree)
    url = _canonical_url(tree) or _saved_from(data)
    layout = analyse(tree, url)
    extraction, markdown, kept, left_out = _content(layout)
    return Webpage(
        markdown=_titled(markdown, title),
        extraction=extraction,
        title=title,
        url=url,
        page_chars=layout.page_chars,
        links_unwrapped=unwrapped,
        links_dropped=dropped,
        kind=layout.kind,
        kept_chars=kept,
        left_out=left_out,
    )


def _content(layout: Layout) -> tuple[str, str, int, dict[str, int]]:
    """(extraction, markdown, visible characters kept, blocks left out by kind)."""
    if not layout.content_chars:  # all chrome: nothing to choose from
        return "whole page", _to_markdown(layout.visible), layout.page_chars, {}
    if layout.kind == "article":
        main = _main_content(layout.visible)
        if main is not None and len(main) >= MAIN_MIN_CHARS:
            kept, outside = _coverage(main, layout.content)
            if kept >= MAIN_MIN_SHARE * layout.content_chars:
                left_out = dict(layout.chrome) | ({OUTSIDE_MAIN: outside} if outside else {})
                return "main content", main, kept, left_out
    markdown = _to_markdown(layout.content)
    return "page content", markdown, layout.content_chars, dict(layout.chrome)


def _titled(markdown: str, title: str | None) -> str:
    markdown = _ESCAPED_UNDERSCORE.sub("_", markdown)  # STRIPECOUNT\\_CONFIG, user\\_name
    if title and not markdown.lstrip().startswith("#"):
        return f"# {title}\n\n{markdown}"
    return markdown


def _to_markdown(element: Any) -> str:
    from contextq.files.page_markdown import element_markdown  # noqa: PLC0415 - BeautifulSoup

    return element_markdown(element)


def _coverage(main: str, content: Any) -> tuple[int, int]:
    """(visible characters of the page the main content holds, blocks of the content with
    text of their own that it does not hold)."""
    plain = _plain(main)
    squashed = _WORDLESS.sub("", plain)
    outside = 0
    for block in content.iter(*_BLOCK_TAGS):
        text = _WORDLESS.sub("", "".join(block.itertext()))
        if len(text) >= 16 and text[:32] not in squashed and block.find(".//p") is None:
            outside += 1
    return len(plain), outside


def _plain(markdown: str) -> str:
    text = _MD_LINK.sub(r"\1", _MD_IMAGE.sub("", markdown))
    return norm(_MD_SYNTAX.sub(" ", _MD_ESCAPE.sub(r"\1", text)))


def _saved_from(data: bytes) -> str | None:
    """The address a browser's "Save page as" notes at the top of the file."""
    found = _SAVED_FROM.search(data[:4096])
    return found.group(1).decode("ascii", "replace")[:2000] if found else None


def _parse(data: bytes) -> Any:
    from trafilatura.utils import load_html  # noqa: PLC0415 - trafilatura, for web pages only

    try:
        tree = load_html(data)
    except (etree.LxmlError, ValueError) as exc:
        raise InvalidInput(f"this HTML page could not be parsed ({exc})") from exc
    if tree is None:
        raise InvalidInput("this HTML file holds no HTML document")
    return tree


def _clean_links(tree: Any) -> tuple[int, int]:
    unwrapped = dropped = 0
    permalinks = []
    for anchor in tree.iter("a"):
        href = anchor.get("href")
        if not href:
            continue
        if href.startswith("#") and (anchor.text or "").strip() in _PERMALINK_TEXT:
            permalinks.append(anchor)  # a heading's own anchor (Sphinx, MkDocs, GitHub)
            continue
        cleaned = clean_link(href)
        if cleaned is None:
            del anchor.attrib["href"]
            dropped += 1
        elif cleaned != href.strip():
            anchor.set("href", cleaned)
            unwrapped += 1
    for anchor in permalinks:
        drop(anchor)
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


def _main_content(tree: Any) -> str | None:
    import trafilatura  # noqa: PLC0415

    text = trafilatura.extract(
        tree,  # pruned by trafilatura: the layout's copy of the visible page
        output_format="markdown",
        include_tables=True,
        include_links=True,
        include_formatting=True,
        include_images=False,
        include_comments=False,
        favor_precision=True,
        fast=True,  # no backup extractors: a main content that misses the page's text
        # is caught by the coverage check, which sends the page's content instead
        deduplicate=False,
        with_metadata=False,
    )
    return text.strip() if text else None
