"""The use cases: one home each.

Keyword-only functions taking `session` (or, for long-running work that must not hold
a transaction, nothing but ids and `settings`) and `settings`. Routes (`api/routes`)
and Celery tasks (`tasks/`) are adapters of a few lines over these; the engine
(`contextq/`) decides, `store/` persists, this layer loads and saves around the
engine's decision. `service.enqueue` is the only module that sends Celery messages.
"""
