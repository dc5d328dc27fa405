"""Re-export of `contextq_client.integrations.pydantic_ai` (where the code lives)."""

from contextq_client.integrations.pydantic_ai import from_openai, history_processor, to_openai

__all__ = ["from_openai", "history_processor", "to_openai"]
