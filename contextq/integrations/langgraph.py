"""Re-export of `contextq_client.integrations.langgraph` (where the code lives)."""

from contextq_client.integrations.langgraph import (
    async_builtin_tools,
    builtin_tools,
    pre_model_hook,
)

__all__ = ["async_builtin_tools", "builtin_tools", "pre_model_hook"]
