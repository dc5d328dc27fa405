"""Compatibility: the SDK moved to the `contextq-client` distribution (`contextq_client`).

`contextq.sdk` and its submodules (`contextq.sdk.models`, `contextq.sdk.events`, …) are the
very modules of `contextq_client`, registered under their old names, so existing imports
and `isinstance` checks keep working. New code imports `contextq_client`.
"""

from __future__ import annotations

import importlib
import sys

from contextq_client import *  # noqa: F403  (the public names, re-exported)
from contextq_client import __all__ as __all__

# the old submodule names, each the same module object as its new home
_MOVED = {
    "async_resources": "async_resources",
    "async_resources_more": "async_resources",  # split by namespace: one package
    "base": "base",
    "chat": "chat_kwargs",
    "client": "client",
    "errors": "errors",
    "events": "events",
    "models": "models",
    "models_context": "models_context",
    "resources": "resources",
    "resources_more": "resources",
    "routing": "routing",
    "transport": "transport",
}
for _old, _new in _MOVED.items():
    sys.modules[f"{__name__}.{_old}"] = importlib.import_module(f"contextq_client.{_new}")
