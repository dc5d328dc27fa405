"""Options every HTTP client command takes (docs/cli.md: `--api`, `--key`)."""

from __future__ import annotations

from typing import Annotated

import typer

ApiOpt = Annotated[
    str | None,
    typer.Option(
        "--api",
        envvar="CONTEXTQ_API_URL",
        show_envvar=True,
        help="API base URL (default: the one `contextq up` saved in DATA_DIR/api-url, else "
        "http://127.0.0.1:8000)",
    ),
]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--key",
        envvar="CONTEXTQ_API_KEY",
        show_envvar=True,
        help="API key (default: DATA_DIR/dev-api-key saved by `contextq up`)",
    ),
]
