"""Re-export of `contextq_client.integrations.pydantic_ai` (where the code lives)."""

from contextq_client.integrations.pydantic_ai import (
    async_builtin_tools,
    builtin_tools,
    from_openai,
    history_processor,
    to_openai,
)

__all__ = ["async_builtin_tools", "builtin_tools", "from_openai", "history_processor", "to_openai"]
