"""The inspector (docs/inspector.md): a small static app at `/ui` that shows what the model will
see.

The page and its scripts are package data (`api/ui/static/`), served as they are: no
templates, no build step, no third-party assets. The page holds no data and no key; its
scripts ask the `/v1` routes with the key a person typed into its login form (kept in
`sessionStorage`). Every answer carries a strict Content-Security-Policy: scripts and
styles from this origin only (no inline script), images from this origin or `data:`
URLs (the context's image parts), requests to this origin only, no frames, no plugins.
The routes are left out of the OpenAPI document: they are not part of the API.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from fastapi import APIRouter, Response
from fastapi.responses import RedirectResponse

from contextq.errors import NotFound

router = APIRouter(include_in_schema=False)

CSP = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    )
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-cache",
}
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


@cache
def static_files() -> dict[str, bytes]:
    """The shipped files by name, read once (a request never names a path on disk)."""
    folder = resources.files(__package__).joinpath("static")
    return {
        entry.name: entry.read_bytes()
        for entry in folder.iterdir()
        if entry.is_file() and any(entry.name.endswith(ext) for ext in MEDIA_TYPES)
    }


def _serve(name: str) -> Response:
    body = static_files().get(name)
    if body is None:
        raise NotFound("no such file in the inspector")
    media_type = MEDIA_TYPES[name[name.rindex(".") :]]
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


@router.get("/ui")
async def page() -> Response:
    """The inspector's one page; the scripts route between its views by the URL's hash."""
    return _serve("index.html")


@router.get("/ui/")
async def page_slash() -> RedirectResponse:
    return RedirectResponse("/ui", status_code=308)


@router.get("/ui/static/{name}")
async def static(name: str) -> Response:
    return _serve(name)
