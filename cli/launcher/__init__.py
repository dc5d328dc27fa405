"""`contextq up` and the command lines of each part, split along their seams:

- `processes`   children in their own process groups, stop, reap, the DATA_DIR lock;
- `supervision` restart with backoff, give up after 5 deaths in 5 minutes;
- `ports`       asked ports held first, free ports picked around them;
- `broker`      the embedded Valkey (config, password, AOF);
- `devkey`      DATA_DIR, the development API key, Flower's password;
- `argv`        the command line of each part;
- `probes`      is a part answering;
- `stack`       the whole stack: prepare, start, wait, supervise, stop.

Nothing here imports FastAPI or Celery at import time; the CLI stays fast.
"""

from cli.launcher.processes import LaunchError
from cli.launcher.stack import Stack, UpOptions, run_up

__all__ = ["LaunchError", "Stack", "UpOptions", "run_up"]
