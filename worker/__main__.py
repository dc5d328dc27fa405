"""`python -P -m worker -A worker.app …`: the `celery` command (worker, beat, Flower) over
contextq's own app, whatever directory it runs in
(docs/operations.md#how-contextq-up-runs-the-stack).

Celery finds the `-A` app with the working directory put first on `sys.path` for the
time of the import (`celery.utils.imports.import_from_cwd`), so from a project with its
own `worker/` package a plain `celery -A worker.app` imports that one. Here our app is
imported first, from `sys.path` as `-P` leaves it (no working directory), and Celery then
finds it already loaded; its task modules are imported by the app's loader, which adds
nothing to `sys.path` (`worker.app.OwnCodeLoader`).
"""

from __future__ import annotations

import sys

from celery import maybe_patch_concurrency


def main() -> None:
    maybe_patch_concurrency()  # as `celery` does, before anything else is imported
    from celery.bin.celery import main as celery  # noqa: PLC0415 - after the patch

    import worker.app  # noqa: F401, PLC0415  (ours, before Celery looks for `-A worker.app`)

    sys.argv[0] = "celery"  # its usage and error lines name the command people know
    sys.exit(celery())


if __name__ == "__main__":
    main()
