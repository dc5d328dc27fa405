"""The `contextq` command: the whole stack on one machine (`up`), each part alone, and the
client commands. An application package over `api`, `worker`, `store` and the engine."""
