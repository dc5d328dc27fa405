"""RSS and Atom feeds → a list of items: title, date, link and text.

A feed is XML whose items carry entity-escaped HTML; shown as XML it is mostly
markup. Read here with defusedxml's streaming parser (entities and external
references refused, as for any XML), RSS 2.0, RSS 1.0 (RDF) and Atom 1.0 alike.
An item's HTML becomes markdown (markdownify), cut at MAX_STRING_LENGTH characters;
the first MAX_ARRAY_ITEMS items are shown and the rest counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from contextq.errors import HostileInput, InvalidInput
from contextq.files.links import clean_link
from contextq.settings import Settings

_ATOM = "{http://www.w3.org/2005/Atom}"
_RSS1 = "{http://purl.org/rss/1.0/}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CONTENT = "{http://purl.org/rss/1.0/modules/content/}"
_RDF = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
_ITEM_TAGS = frozenset({"item", f"{_RSS1}item", f"{_ATOM}entry"})
_FEED_ROOTS = frozenset({"rss", f"{_RDF}RDF", f"{_ATOM}feed"})
_TITLE = ("title", f"{_ATOM}title", f"{_RSS1}title")
_DATE = (
    "pubDate",
    f"{_DC}date",
    f"{_ATOM}published",
    f"{_ATOM}updated",
)
_TEXT = (f"{_CONTENT}encoded", "description", f"{_RSS1}description", f"{_ATOM}content")
_SUMMARY = (f"{_ATOM}summary",)
_BLANK_LINES = re.compile(r"\n{3,}")


def feed_kind(root_tag: str) -> str | None:
    """ "rss", "rdf" or "atom" when an XML root element is a feed's, else None."""
    if root_tag not in _FEED_ROOTS:
        return None
    return {"rss": "rss", f"{_RDF}RDF": "rdf", f"{_ATOM}feed": "atom"}[root_tag]


@dataclass
class Feed:
    kind: str
    title: str = ""
    link: str = ""
    items: list[dict[str, str]] = field(default_factory=list)
    total_items: int = 0
    texts_cut: int = 0
    open_items: int = 0  # items the parser is inside


def read_feed(path: Path, settings: Settings) -> Feed:
    feed: Feed | None = None
    try:
        with path.open("rb") as fh:
            for event, elem in iterparse(fh, events=("start", "end")):
                if event == "start":
                    if feed is None:
                        kind = feed_kind(elem.tag)
                        if kind is None:
                            raise InvalidInput("this XML file is not an RSS or Atom feed")
                        feed = Feed(kind)
                    feed.open_items += elem.tag in _ITEM_TAGS
                    continue
                _on_end(feed, elem, settings)
    except DefusedXmlException as exc:
        raise HostileInput(
            f"this feed declares entities or external references ({type(exc).__name__}); "
            "they are refused (billion-laughs and XXE protection)"
        ) from exc
    except SyntaxError as exc:
        raise InvalidInput(f"invalid XML in this feed: {exc}") from exc
    if feed is None:
        raise InvalidInput("this feed has no root element")
    return feed


def _on_end(feed: Feed | None, elem: Any, settings: Settings) -> None:
    if feed is None:
        return
    tag = elem.tag
    if tag in _ITEM_TAGS:
        feed.open_items -= 1
        feed.total_items += 1
        if len(feed.items) < settings.MAX_ARRAY_ITEMS:
            feed.items.append(_item(feed, elem, settings))
        elem.clear()
    elif feed.open_items or elem.tag in _FEED_ROOTS:
        return
    elif tag in _TITLE and not feed.title:
        feed.title = _squash(elem.text or "")
    elif tag in ("link", f"{_ATOM}link", f"{_RSS1}link") and not feed.link:
        feed.link = _link(elem)


def _item(feed: Feed, elem: Any, settings: Settings) -> dict[str, str]:
    text = _first_text(elem, _TEXT) or _first_text(elem, _SUMMARY)
    body = _html_to_markdown(text) if text else ""
    limit = settings.MAX_STRING_LENGTH
    if len(body) > limit:
        feed.texts_cut += 1
        body = f"{body[:limit]}… ({len(body) - limit} more chars)"
    link = ""
    for child in elem:
        if child.tag in ("link", f"{_ATOM}link", f"{_RSS1}link", "guid") and not link:
            link = _link(child)
    return {
        "title": _squash(_first_text(elem, _TITLE)),
        "date": _squash(_first_text(elem, _DATE)),
        "link": link,
        "text": body,
    }


def _first_text(elem: Any, tags: tuple[str, ...]) -> str:
    for tag in tags:
        child = elem.find(tag)
        if child is not None:
            text = "".join(child.itertext()) if len(child) else (child.text or "")
            if text.strip():
                return text
    return ""


def _link(elem: Any) -> str:
    if elem.tag == "guid" and elem.get("isPermaLink", "true") == "false":
        return ""
    rel = elem.get("rel", "alternate")
    href = elem.get("href") or (elem.text or "").strip()
    if rel != "alternate" or not href.startswith("http"):
        return ""
    return clean_link(href) or ""


def _squash(text: str) -> str:
    return " ".join(text.split())


def _html_to_markdown(text: str) -> str:
    if "<" not in text:
        return text.strip()
    from markitdown.converters._markdownify import _CustomMarkdownify  # noqa: PLC0415 - markitdown

    markdown = _CustomMarkdownify().convert(text)
    return _BLANK_LINES.sub("\n\n", markdown).strip()


def render_feed(feed: Feed) -> str:
    kinds = {"rss": "RSS feed", "rdf": "RSS 1.0 feed", "atom": "Atom feed"}
    lines = [f"# {feed.title or kinds[feed.kind]}", ""]
    about = f"{kinds[feed.kind]}, {feed.total_items} items"
    if feed.link:
        about += f"; {feed.link}"
    lines += [about, ""]
    for number, item in enumerate(feed.items, 1):
        lines.append(f"## {number}. {item['title'] or '(untitled)'}")
        details = [d for d in (item["date"], item["link"]) if d]
        if details:
            lines.append(" · ".join(details))
        if item["text"]:
            lines += ["", item["text"]]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def is_feed(path: Path) -> bool:
    """Whether an XML file's root element is an RSS or Atom feed's (reads only its start)."""
    try:
        with path.open("rb") as fh:
            for _event, elem in iterparse(fh, events=("start",)):
                return feed_kind(elem.tag) is not None
    except Exception:  # any XML problem is read_xml's to report
        return False
    return False
