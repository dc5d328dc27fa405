"""What a saved web page is made of: its visible text, its chrome, and what kind of page it is.

`analyse(tree)` drops from the parsed page what a reader never sees (scripts, styles,
`hidden`, `aria-hidden`, `display:none`), then takes out of a copy of it the page's
chrome, block by block, each named by what it is: navigation (`<nav>`, ARIA navigation
and menu roles), the site header and footer (`<header>`/`<footer>` outside the content,
ARIA banner/contentinfo), sidebars (`<aside>`, complementary), search forms, controls
(buttons, selects), cookie notices and link lists (blocks of three or more links that are
mostly link text: language lists, category lists, tag clouds). What remains is the
page's content.

The kind of page decides what its content is. A page of repeated items — search results,
a forum thread's posts, a product listing — is its items: several siblings of one
markup, each with a heading (or a time, or schema.org markup) and a link, together
holding most of the content; schema.org types (`SearchResultsPage`,
`DiscussionForumPosting`, `ItemList`, …) say the same where the site declares them.
Any other page is an article, whose main content trafilatura finds (`webpage`).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any

from lxml import etree

_SPACES = re.compile(r"\s+")
_INVISIBLE_TAGS = ("script", "style", "noscript", "template", "svg", "head", "iframe", "object")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)
_CONTENT_TAGS = ("main", "article")
_CONTROL_TAGS = ("button", "select", "textarea", "input")
_ROLES = {
    "navigation": "navigation",
    "menubar": "navigation",
    "menu": "navigation",
    "tablist": "navigation",
    "banner": "header",
    "contentinfo": "footer",
    "complementary": "sidebar",
    "search": "search form",
}
_SKIP_LINK = re.compile(r"(skip|jump) to ", re.I)
_COOKIE = re.compile(r"cookie|consent|gdpr", re.I)
_INVISIBLE = etree.XPath(
    "|".join(f"//{tag}" for tag in _INVISIBLE_TAGS)
    + "|//*[@hidden]|//*[@aria-hidden='true']|//input[@type='hidden']"
    + "|//*[contains(@style, 'none') or contains(@style, 'hidden')]"
    + "|//comment()|//processing-instruction()"
)
_NAMED_BY = " or ".join(
    f"contains(@{attr}, '{word}')"
    for attr in ("id", "class")
    for word in ("ookie", "onsent", "gdpr", "GDPR")  # _COOKIE, in C: no regex callback
)
_CHROME_CANDIDATES = etree.XPath(
    "//nav|//aside|//header|//footer|//*[@role]|//button|//select|//textarea|//input"
    f"|//form|//a[starts-with(@href, '#')]|//*[{_NAMED_BY}]"
)
_SEARCH_INPUT_NAMES = frozenset({"q", "query", "search", "keywords", "s", "search_query"})
_LINK_LIST_TAGS = frozenset({"div", "ul", "ol", "dl", "table", "tbody", "p", "section", "span"})
_ITEM_TAGS = frozenset({"div", "li", "article", "tr"})

_SCHEMA_KINDS = (
    ("SearchResultsPage", "search results"),
    ("DiscussionForumPosting", "forum thread"),
    ("QAPage", "forum thread"),
    ("ItemList", "listing"),
    ("CollectionPage", "listing"),
    ("OfferCatalog", "listing"),
)
_SEARCH_URL = re.compile(r"/search\b|/results\b|[?&](q|query|search_query|p|wd)=", re.I)
_FORUM_CLASS = re.compile(r"\b(post|comment|reply|message|answer)", re.I)


@dataclass
class Layout:
    kind: str  # "search results" | "forum thread" | "listing" | "article"
    content: Any  # the visible page without its chrome (an lxml element)
    visible: Any  # the visible page, chrome and all: the parsed page itself
    page_chars: int  # visible characters of the whole page (whitespace collapsed)
    content_chars: int
    chrome: dict[str, int] = field(default_factory=dict)  # what was taken out → blocks


def norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def text_of(element: Any) -> str:
    return norm("".join(element.itertext()))


def analyse(tree: Any, url: str | None = None) -> Layout:
    declared = _schema_kind(tree)  # before the scripts (JSON-LD) go
    _drop_invisible(tree)
    body = _body(copy.deepcopy(tree))
    page_chars = len(text_of(body))
    chrome, sizes = _take_out_chrome(body)
    content_chars = len(text_of(body))
    kind = declared or _kind(body, content_chars, url, sizes)
    return Layout(kind, body, tree, page_chars, content_chars, chrome)


def _body(page: Any) -> Any:
    found = page.find(".//body") if page.tag != "body" else page
    return found if found is not None else page


def drop(element: Any) -> None:
    """Remove `element`, keeping the text that follows it (its tail)."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail and tail.strip():
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def _drop_invisible(page: Any) -> None:
    for element in _INVISIBLE(page):
        style = element.get("style") if isinstance(element.tag, str) else None
        if style is None or _HIDDEN_STYLE.search(style) or not _styled_only(element):
            drop(element)


def _styled_only(element: Any) -> bool:
    """Whether `element` was found by its style attribute alone."""
    return not (
        element.tag in _INVISIBLE_TAGS
        or element.get("hidden") is not None
        or element.get("aria-hidden") == "true"
        or (element.tag == "input" and element.get("type") == "hidden")
    )


# --- chrome ------------------------------------------------------------------------------


def _take_out_chrome(body: Any) -> tuple[dict[str, int], dict[Any, tuple[int, int, int]]]:
    """Drop the chrome from `body`: first what the markup names (nav, header, roles, …),
    then the link lists among what is left. Returns (kind → blocks dropped, the text
    sizes measured before the link lists went: they still hold for the items)."""
    chrome: dict[str, int] = {}
    _drop_chrome(body, _named_chrome(body), chrome)
    sizes = text_sizes(body)
    _drop_chrome(body, _link_lists(body, sizes), chrome)
    return chrome, sizes


def _drop_chrome(body: Any, found: list[tuple[Any, str]], chrome: dict[str, int]) -> None:
    for element, kind in found:
        if kind != "controls" or text_of(element):  # an empty control is not worth a word
            chrome[kind] = chrome.get(kind, 0) + 1
        drop(element)


def _named_chrome(body: Any) -> list[tuple[Any, str]]:
    """The outermost elements the markup names as chrome, in document order."""
    found: list[tuple[Any, str]] = []
    chosen: set[Any] = set()
    for element in _CHROME_CANDIDATES(body):
        ancestors = list(element.iterancestors())
        if chosen.intersection(ancestors):
            continue
        in_content = any(a.tag in _CONTENT_TAGS or a.get("role") == "main" for a in ancestors)
        kind = _named_kind(element, in_content)
        if kind is not None:
            found.append((element, kind))
            chosen.add(element)
    return found


def _named_kind(element: Any, in_content: bool) -> str | None:
    tag = str(element.tag)
    role = (element.get("role") or "").lower()
    kind: str | None = None
    if tag == "nav" or _is_skip_link(element):
        kind = "navigation"
    elif role in _ROLES:
        kind = _ROLES[role]
    elif tag == "aside":
        kind = "sidebar"
    elif not in_content and tag in ("header", "footer"):
        kind = tag
    elif tag in _CONTROL_TAGS:
        kind = "controls"
    elif tag == "form" and _is_search_form(element):
        kind = "search form"
    elif _COOKIE.search(f"{element.get('id', '')} {element.get('class', '')}"):
        kind = "cookie notice"
    return kind


def _is_skip_link(element: Any) -> bool:
    """`Skip to content`, `Jump to content`: a link to an anchor of the page itself."""
    if element.tag != "a" or not (element.get("href") or "").startswith("#"):
        return False
    return bool(_SKIP_LINK.match(norm(element.text_content())))


def _link_lists(body: Any, sizes: dict[Any, tuple[int, int, int]]) -> list[tuple[Any, str]]:
    """The outermost blocks of three or more links that are mostly link text."""
    found: list[tuple[Any, str]] = []
    stack = list(body)
    while stack:
        element = stack.pop()
        chars, link_chars, links = sizes.get(element, (0, 0, 0))
        if element.tag in _LINK_LIST_TAGS and links >= 3 and link_chars >= 0.7 * chars >= 14:
            found.append((element, "link list"))
        elif links:
            stack.extend(element)
    return found


def _is_search_form(form: Any) -> bool:
    for field_ in form.iter("input", "textarea"):
        if field_.get("type") == "search" or (field_.get("name") or "") in _SEARCH_INPUT_NAMES:
            return True
    return False


def text_sizes(root: Any) -> dict[Any, tuple[int, int, int]]:
    """Per element: (characters, characters inside links, links), bottom-up in one pass
    (characters of its stripped text pieces: close enough to the collapsed count)."""
    sizes: dict[Any, tuple[int, int, int]] = {}
    for element in reversed(list(root.iter())):
        own = len(element.text.strip()) if element.text and isinstance(element.tag, str) else 0
        chars, link_chars, links = own, 0, 0
        for child in element:
            c, lc, n = sizes.get(child, (0, 0, 0))
            chars += c + (len(child.tail.strip()) if child.tail else 0)
            link_chars += lc
            links += n
        if element.tag == "a" and element.get("href"):
            link_chars, links = chars, links + 1
        sizes[element] = (chars, link_chars, links)
    return sizes


# --- the kind of page ----------------------------------------------------------------------


def _kind(
    content: Any, content_chars: int, url: str | None, sizes: dict[Any, tuple[int, int, int]]
) -> str:
    items = repeated_items(content, content_chars, sizes)
    if items is None:
        return "article"
    if url and _SEARCH_URL.search(url):
        return "search results"
    if any(
        _FORUM_CLASS.search(item.get("class") or "") or item.find(".//time") is not None
        for item in items
    ):
        return "forum thread"
    return "listing"


def _schema_kind(tree: Any) -> str | None:
    declared = " ".join(tree.xpath("//@itemtype"))
    declared += " ".join(tree.xpath('//script[@type="application/ld+json"]/text()'))
    for schema_type, kind in _SCHEMA_KINDS:
        if schema_type in declared:
            return kind
    if declared.count("schema.org/Comment") >= 2 or declared.count('"Comment"') >= 2:
        return "forum thread"
    return None


def repeated_items(
    content: Any, content_chars: int, sizes: dict[Any, tuple[int, int, int]]
) -> list[Any] | None:
    """The largest group of sibling items of one markup (tag and first class) with a
    heading (or a time, or schema.org markup) and a link each, when at least three of
    them hold 40 % of the content or more; else None."""
    best: list[Any] = []
    best_chars = 0
    for parent in content.iter():
        if len(parent) < 3 or sizes.get(parent, (0, 0, 0))[0] < 0.4 * content_chars:
            continue
        groups: dict[tuple[str, str], list[Any]] = {}
        for child in parent:
            if isinstance(child.tag, str) and child.tag in _ITEM_TAGS:
                first_class = (child.get("class") or "").split()[:1]
                groups.setdefault((child.tag, "".join(first_class)), []).append(child)
        for members in groups.values():
            if len(members) < 3:
                continue
            items = [m for m in members if _is_item(m, sizes)]
            chars = sum(sizes.get(m, (0, 0, 0))[0] for m in items) if len(items) >= 3 else 0
            if chars > best_chars:
                best, best_chars = items, chars
    if best and best_chars >= 0.4 * content_chars:
        return best
    return None


def _is_item(element: Any, sizes: dict[Any, tuple[int, int, int]]) -> bool:
    chars, _link_chars, links = sizes.get(element, (0, 0, 0))
    if not links or chars < 30:
        return False
    marked = element.xpath(
        ".//h1|.//h2|.//h3|.//h4|.//h5|.//h6|.//*[@role='heading']|.//time|.//*[@itemtype]"
    )
    return bool(marked) or element.get("itemtype") is not None
