"""contextq engine: file processing, token counting, history strategies.

The engine imports no FastAPI, Celery or SQL; `api/`, `worker/`, `tasks/`
and `store/` are thin layers over it.
"""

__version__ = "0.1.0"
