"""Compatibility: the integrations moved to `contextq_client.integrations` (the
`contextq-client` distribution); `contextq.integrations.pydantic_ai` and `.langgraph`
re-export them."""
