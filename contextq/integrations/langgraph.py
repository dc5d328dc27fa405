"""Re-export of `contextq_client.integrations.langgraph` (where the code lives)."""

from contextq_client.integrations.langgraph import pre_model_hook

__all__ = ["pre_model_hook"]
