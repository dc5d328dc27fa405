"""The Celery app, its configuration (derived from settings), beat schedule and signals."""
