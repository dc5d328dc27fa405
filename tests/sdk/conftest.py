"""The SDK tests use `contextq.testing`'s fixtures as a user would (one real `contextq up`
for the session, started only by the tests that ask for it)."""

from contextq.testing import contextq_client, contextq_stack

__all__ = ["contextq_client", "contextq_stack"]
