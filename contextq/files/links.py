"""Tracking redirect links: unwrapped to their target, or dropped when it cannot be known.

Search engines, mail filters and social sites wrap every outbound link in a redirect
(`bing.com/ck/a?…&u=a1aHR0c…`, `google.com/url?q=…`, `duckduckgo.com/l/?uddg=…`,
`…safelinks.protection.outlook.com/?url=…`, `l.facebook.com/l.php?u=…`). Such a URL
costs dozens of tokens and tells a model nothing; its target is the link. Campaign
parameters (`utm_*`, `fbclid`, `gclid`, …) are removed from the targets too.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

_TARGET_PARAMS = (
    "u",
    "url",
    "q",
    "uddg",
    "target",
    "dest",
    "destination",
    "redirect",
    "redirect_url",
    "redirect_uri",
    "redir",
    "to",
    "link",
    "murl",
)
# paths that only ever redirect: a link to one whose target is not found is dropped
_REDIRECT_PATHS = re.compile(
    r"^/(?:ck/a|url|aclk|l/?|l\.php|link|redirect|redir|r|out|click|track(?:ing)?/click)$",
    re.IGNORECASE,
)
_YAHOO_RU = re.compile(r"/RU=([^/]+)/R[KS]=")
_TRACKING_PARAM = re.compile(
    r"^(?:utm_\w+|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|mc_[ce]id|_hsenc|_hsmi|igshid)$",
    re.IGNORECASE,
)


def clean_link(href: str) -> str | None:
    """The link a reader means: a redirect's target, without campaign parameters.

    None when `href` is a tracking redirect whose target cannot be recovered (drop the
    link, keep its text). Other links come back unchanged but for tracking parameters.
    """
    href = href.strip()
    if not href or href.startswith(("#", "mailto:", "tel:", "javascript:", "data:")):
        return href or None
    parts = urlsplit(href)
    target = _redirect_target(parts.path, parts.query)
    if target is not None:
        return _strip_tracking(target)
    if _REDIRECT_PATHS.match(parts.path) and parts.query:
        return None  # a redirect we cannot read: it would only cost tokens
    return _strip_tracking(href) if parts.query else href


def _redirect_target(path: str, query: str) -> str | None:
    yahoo = _YAHOO_RU.search(path)
    if yahoo:
        return _absolute(unquote(yahoo.group(1)))
    if not query:
        return None
    params = {k.lower(): v for k, v in parse_qsl(query, keep_blank_values=False)}
    for name in _TARGET_PARAMS:
        value = params.get(name)
        if value is None:
            continue
        found = _absolute(value) or _absolute(_bing_base64(value))
        if found:
            return found
    return None


def _bing_base64(value: str) -> str:
    """Bing's `u=a1<base64url of the target>`."""
    if not value.startswith("a1") or len(value) < 8:
        return ""
    raw = value[2:]
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        return ""


def _absolute(value: str) -> str | None:
    value = value.strip()
    if value.lower().startswith(("http://", "https://")) and urlsplit(value).netloc:
        return value
    return None


def _strip_tracking(url: str) -> str:
    parts = urlsplit(url)
    if not parts.query:
        return url
    kept = parse_qsl(parts.query, keep_blank_values=True)
    clean = [(k, v) for k, v in kept if not _TRACKING_PARAM.match(k)]
    if len(clean) == len(kept):
        return url
    return urlunsplit(parts._replace(query=urlencode(clean)))
