"""Celery tasks: each a few lines over a plain function that takes settings/a session.

- `tasks.files`            process_file, recover_files, noop
- `tasks.file_processing`  the plain functions behind them (tests call these directly)
- `tasks.history`          the history service's tasks
"""
