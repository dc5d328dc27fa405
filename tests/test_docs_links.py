"""Contract references resolve inside this repository: the code cites the docs pages that
hold the contract (`docs/context.md#the-rooms`: a page and one of its headings), never a
document the repository does not have, and every such reference names a page and a heading
that exist. (Markdown links between the docs pages are tests/test_readme.py's.)"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# directories that are not the project's own text: caches, environments, build output
SKIP_DIRS = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    ".contextq",
    "build",
    "dist",
}
# the external product contract's section sign, built so that this file does not cite it
EXTERNAL_SECTION = "SPEC " + "\N{SECTION SIGN}"
# `docs/<page>.md` or `docs/<page>.md#<heading id>`, not as part of a longer path or URL
REFERENCE = re.compile(r"(?<![\w/.-])docs/([\w-]+)\.md(?:#([\w-]+))?")
# mentions of `docs/<page>.md` that are not this repository's pages: a workspace path the
# tests write, another project's page a source comment credits
NOT_OURS = {
    ("tests/integration/test_workspaces.py", "notes"),
    ("contextq/calibration.py", "validate-claude-tokens"),
    ("docs/token-counting.md", "validate-claude-tokens"),
}


def _texts() -> list[tuple[str, str]]:
    """(path relative to the root, text) of every text file of the repository."""
    found: list[tuple[str, str]] = []
    stack = [ROOT]
    while stack:
        folder = stack.pop()
        for entry in sorted(folder.iterdir()):
            if entry.is_dir():
                if entry.name not in SKIP_DIRS and not entry.name.endswith(".egg-info"):
                    stack.append(entry)
                continue
            if not entry.is_file() or entry.stat().st_size > 2_000_000:
                continue
            data = entry.read_bytes()
            if b"\0" in data:
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            found.append((entry.relative_to(ROOT).as_posix(), text))
    return found


TEXTS = _texts()


@cache
def _heading_ids(page: str) -> frozenset[str]:
    """GitHub's ids of a page's headings: lower case, punctuation dropped, spaces to hyphens,
    a repeated heading's id suffixed -1, -2, …; headings inside code blocks are not headings."""
    text = (DOCS / f"{page}.md").read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    ids: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+?)#*\s*$", prose, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        unique, n = slug, 0
        while unique in ids:
            n += 1
            unique = f"{slug}-{n}"
        ids.add(unique)
    return frozenset(ids)


def _references() -> list[tuple[str, int, str, str | None]]:
    refs = []
    for path, text in TEXTS:
        for match in REFERENCE.finditer(text):
            page, anchor = match.group(1), match.group(2)
            if (path, page) in NOT_OURS:
                continue
            line = text.count("\n", 0, match.start()) + 1
            refs.append((path, line, page, anchor))
    return refs


def test_the_scan_sees_the_code_and_the_docs() -> None:
    paths = {path for path, _ in TEXTS}
    for expected in (
        "contextq/assembly/context.py",
        "api/ui/static/conversation.js",
        "pyproject.toml",
        "scripts/lint",
        "docs/context.md",
        "README.md",
    ):
        assert expected in paths, f"the scan missed {expected}"
    assert len(_references()) > 300, "the code cites its docs pages: the scan finds too few"


def test_no_reference_to_a_document_outside_the_repository() -> None:
    cited = [
        f"{path}:{text.count(chr(10), 0, m.start()) + 1}"
        for path, text in TEXTS
        if not path.startswith("docs/")
        for m in re.finditer(re.escape(EXTERNAL_SECTION), text)
    ]
    assert not cited, (
        f"{len(cited)} references to the external spec's sections; point each at the docs "
        f"page and heading that state the contract (docs/<page>.md#<heading>): {cited[:20]}"
    )


@pytest.mark.parametrize("page", sorted({page for _, _, page, _ in _references()}))
def test_every_cited_docs_page_and_heading_exists(page: str) -> None:
    refs = [(path, line, anchor) for path, line, p, anchor in _references() if p == page]
    assert (DOCS / f"{page}.md").is_file(), f"no docs/{page}.md, cited at {refs[:10]}"
    ids = _heading_ids(page)
    missing = [
        f"{path}:{line} #{anchor}" for path, line, anchor in refs if anchor and anchor not in ids
    ]
    assert not missing, f"docs/{page}.md has no heading with these ids: {missing}"


def test_heading_ids_follow_github() -> None:
    ids = _heading_ids("context")
    assert "the-cut-point-and-a-prefix-that-stays-put" in ids
    assert "clearing-old-tool-results-with-hysteresis" in ids  # the comma dropped
    assert "how-contextq-up-runs-the-stack" in _heading_ids("operations")  # code span kept
