"""Celery tasks: each a few lines over a use case of `service/`.

- `tasks.files`    process_file, index_file, recover_files, noop (over `service.files`)
- `tasks.history`  the history service's tasks
- `tasks.events`   webhook deliveries and the events sweep (over `service.events`)
"""
