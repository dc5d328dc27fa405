"""FastAPI app: thin routes over store/ and contextq/."""
