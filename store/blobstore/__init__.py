"""The blob store's backends (`store.blobs` is the interface and picks one)."""
