"""File engine: detection, one processor per format, the pipeline (`pipeline.process_file`),
`fulltext` sections. Plain functions over files on disk; no web framework, queue or SQL."""
