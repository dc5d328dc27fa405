"""The blob store's interface (`base`) and its backends; `store.blobs` picks one."""
