"""Persistence shared by the API and the worker: engine, tables, queries, blobs."""
