"""Celery tasks: each a few lines over a plain function that takes a session."""
