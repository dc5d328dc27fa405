"""Saved web pages through the whole engine: each kind of page keeps its content, and
whatever is left out is said in `truncation` (issue 18, docs/files.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from contextq.files.pipeline import process_file
from contextq.files.registry import MemoryConversionCache
from contextq.files.webpage import convert_webpage
from contextq.settings import Settings
from tests.engine.files import web_samples
from tests.engine.files.test_vectors import FORBIDDEN
from tests.engine.files.web_samples import PAGES, WebPage


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.kind + ": " + p.filename)
def test_page_keeps_its_content_and_says_what_it_left_out(
    page: WebPage, write: Callable[[str, bytes], Path]
) -> None:
    path = write(page.filename, page.make())
    result = process_file(path, page.filename, settings=Settings(), cache=MemoryConversionCache())
    assert result.success, result.error
    content = result.content or ""
    missing = [text for text in page.must_include if text not in content]
    assert not missing, (missing, content[:4000])
    chrome = [text for text in page.must_not_include if text in content]
    assert not chrome, (chrome, content[:4000])
    assert not FORBIDDEN.search(content)
    meta = result.metadata
    assert (meta["page_kind"], meta["extraction"]) == (page.kind, page.extraction)
    truncation = result.truncation.to_dict()
    assert truncation["truncated"] is True
    kept, total = truncation["shown"]["page chars"], truncation["total"]["page chars"]
    assert 0 < kept < total == meta["page_chars"]
    assert "navigation" in truncation["summary"] and "blocks left out" in truncation["summary"]
    assert content.rstrip().endswith(f"[truncated: {truncation['summary']}]")
    assert sum(meta["left_out"].values()) == sum(truncation["counts"].values())


def test_search_page_keeps_every_result_and_question() -> None:
    """The issue's page: the old extraction kept the first result and said nothing."""
    page = convert_webpage(web_samples.google_results_page())
    assert (page.kind, page.extraction) == ("search results", "page content")
    for url, title, snippet in web_samples.RESULTS:
        assert f"[{title}]({url})" in page.markdown  # the result's heading, linked
        assert snippet in page.markdown
    order = [page.markdown.index(title) for _, title, _ in web_samples.RESULTS]
    assert order == sorted(order), "results keep the page's order"
    assert page.markdown.index("People also ask") < page.markdown.index("Zebra - Wikipedia")
    assert page.url == "https://www.google.com/search?q=zebra"  # from "saved from url"
    assert page.left_out == {"navigation": 3, "link list": 2, "search form": 1}
    assert page.kept_chars >= 0.8 * page.page_chars


def test_article_is_its_main_content_and_names_the_rest() -> None:
    page = convert_webpage(web_samples.wikipedia_article())
    assert (page.kind, page.extraction) == ("article", "main content")
    assert page.markdown.startswith("# Zebra - Wikipedia")
    assert {"navigation", "link list", "footer"} <= set(page.left_out)
    assert page.kept_chars < 0.7 * page.page_chars  # 60 languages, menus, categories gone
    summary = page.truncation()
    assert summary["shown"] == {"page chars": page.kept_chars}
    assert summary["total"] == {"page chars": page.page_chars}


def test_documentation_page_keeps_code_table_and_api_entry() -> None:
    page = convert_webpage(web_samples.sphinx_page())
    assert "min_stripe_px = 3" in page.markdown  # the code block, unescaped
    assert "| `cache_dir` |" in page.markdown
    assert "¶" not in page.markdown, "heading permalinks are not content"


def test_a_page_with_nothing_left_out_says_so(write: Callable[[str, bytes], Path]) -> None:
    html = b"<html><head><title>Note</title></head><body><p>Feed the foal at six.</p></body></html>"
    result = process_file(write("note.html", html), "note.html", settings=Settings())
    assert result.success, result.error
    assert "Feed the foal at six." in (result.content or "")
    assert result.truncation.to_dict()["truncated"] is False
    assert "[truncated" not in (result.content or "")


def test_a_page_that_is_all_navigation_goes_whole() -> None:
    links = "".join(f'<li><a href="/p{i}">Page {i}</a></li>' for i in range(8))
    page = convert_webpage(f"<html><body><nav><ul>{links}</ul></nav></body></html>".encode())
    assert page.extraction == "whole page"
    assert "Page 7" in page.markdown and page.truncation() == {}


@pytest.mark.parametrize(
    ("declared", "kind"),
    [
        ('itemtype="http://schema.org/SearchResultsPage"', "search results"),
        ('itemtype="https://schema.org/DiscussionForumPosting"', "forum thread"),
        ('itemtype="https://schema.org/ItemList"', "listing"),
    ],
)
def test_schema_org_type_names_the_kind(declared: str, kind: str) -> None:
    body = "".join(f"<p>Paragraph {i} of a page that declares what it is.</p>" for i in range(20))
    page = convert_webpage(f"<html><body><div {declared}>{body}</div></body></html>".encode())
    assert page.kind == kind and page.extraction == "page content"
    assert "Paragraph 19" in page.markdown


def test_json_ld_names_the_kind() -> None:
    posts = "".join(
        f"<div><p>Reply {i}: the stripes help against flies.</p></div>" for i in range(5)
    )
    script = '<script type="application/ld+json">{"@type": "QAPage", "name": "q"}</script>'
    page = convert_webpage(f"<html><head>{script}</head><body>{posts}</body></html>".encode())
    assert page.kind == "forum thread" and "Reply 4" in page.markdown


def test_hidden_text_is_not_counted_as_page_text() -> None:
    shown = "The stripes of each zebra are unique, like a fingerprint. " * 10
    hidden = '<div style="display: none">SECRET-LAYOUT-TEXT</div><p hidden>HIDDEN-TOO</p>'
    page = convert_webpage(f"<html><body><p>{shown}</p>{hidden}</body></html>".encode())
    assert "SECRET-LAYOUT-TEXT" not in page.markdown and "HIDDEN-TOO" not in page.markdown
    assert page.page_chars == len(shown.strip())
