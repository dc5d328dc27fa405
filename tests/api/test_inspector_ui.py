"""The inspector's page and scripts as the API serves them (the browser test is
tests/integration/test_inspector.py): a strict CSP on every answer, only shipped files,
nothing of it in the OpenAPI document, no markup built from strings in the scripts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from api.ui import CSP, static_files

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "api" / "ui" / "static"


def test_page_and_scripts_carry_a_strict_csp(app_client: Any) -> None:
    page = app_client.get("/ui", headers={"Authorization": ""})  # no key needed for the page
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert csp == CSP
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "form-action 'none'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    for src in re.findall(r'(?:src|href)="(/ui/static/[^"]+)"', page.text):
        r = app_client.get(src)
        assert r.status_code == 200, src
        assert r.headers["content-security-policy"] == CSP
    assert app_client.get("/ui/static/app.js").headers["content-type"].startswith("text/javascript")


def test_page_has_no_inline_script_or_style(app_client: Any) -> None:
    html = app_client.get("/ui").text
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert " style=" not in html and "<style" not in html
    assert re.search(r"\son[a-z]+=", html) is None  # no inline event handlers


@pytest.mark.parametrize(
    "path", ["/ui/static/nope.js", "/ui/static/..%2F__init__.py", "/ui/static/__init__.py"]
)
def test_only_shipped_files_are_served(app_client: Any, path: str) -> None:
    assert app_client.get(path).status_code == 404


def test_ui_is_not_part_of_the_api_document(app_client: Any) -> None:
    paths = app_client.get("/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith("/ui")]


def test_scripts_insert_data_as_text_only() -> None:
    scripts = {p.name: p.read_text() for p in STATIC.glob("*.js")}
    assert {"app.js", "api.js", "dom.js", "conversation.js", "files.js"} <= set(scripts)
    for name, text in scripts.items():
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in text, (name, sink)
        assert "localStorage" not in text, name  # the key lives in sessionStorage only


def test_static_files_ship_with_the_wheel() -> None:
    shipped = static_files()
    assert {p.name for p in STATIC.iterdir()} == set(shipped)
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["api"]
    for name in shipped:
        assert any(Path(f"ui/static/{name}").match(pattern) for pattern in package_data), name
