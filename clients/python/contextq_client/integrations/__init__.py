"""Agent-framework integrations (optional extras): `pydantic_ai`, `langgraph`."""
