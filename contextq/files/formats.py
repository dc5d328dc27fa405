"""The format table: extension → (file_type, category, media_type), and magic bytes.

One row per extension. Processors select on `category` and `file_type`, so
the names here are the contract between detection and processors.
"""

from __future__ import annotations

from dataclasses import dataclass

from contextq.files.result import Category


@dataclass(frozen=True)
class Format:
    file_type: str
    category: Category
    media_type: str


def _code(file_type: str, media_type: str | None = None) -> Format:
    return Format(file_type, "code", media_type or f"text/x-{file_type}")


def _text(file_type: str, media_type: str = "text/plain") -> Format:
    return Format(file_type, "text", media_type)


EXTENSIONS: dict[str, Format] = {
    # code
    ".py": _code("python", "text/x-python"),
    ".pyi": _code("python", "text/x-python"),
    ".js": _code("javascript", "text/javascript"),
    ".mjs": _code("javascript", "text/javascript"),
    ".cjs": _code("javascript", "text/javascript"),
    ".jsx": _code("jsx", "text/javascript"),
    ".ts": _code("typescript", "text/x-typescript"),
    ".tsx": _code("tsx", "text/x-typescript"),
    ".java": _code("java", "text/x-java"),
    ".go": _code("go", "text/x-go"),
    ".rs": _code("rust", "text/x-rust"),
    ".c": _code("c", "text/x-c"),
    ".h": _code("c", "text/x-c"),
    ".cpp": _code("cpp", "text/x-c++"),
    ".cc": _code("cpp", "text/x-c++"),
    ".cxx": _code("cpp", "text/x-c++"),
    ".hpp": _code("cpp", "text/x-c++"),
    ".hh": _code("cpp", "text/x-c++"),
    ".cs": _code("csharp", "text/x-csharp"),
    ".rb": _code("ruby", "text/x-ruby"),
    ".php": _code("php", "text/x-php"),
    ".sh": _code("shell", "text/x-shellscript"),
    ".bash": _code("shell", "text/x-shellscript"),
    ".zsh": _code("shell", "text/x-shellscript"),
    ".fish": _code("shell", "text/x-shellscript"),
    ".ps1": _code("powershell", "text/x-powershell"),
    ".bat": _code("batch", "text/x-bat"),
    ".sql": _code("sql", "application/sql"),
    ".kt": _code("kotlin", "text/x-kotlin"),
    ".kts": _code("kotlin", "text/x-kotlin"),
    ".swift": _code("swift", "text/x-swift"),
    ".scala": _code("scala", "text/x-scala"),
    ".lua": _code("lua", "text/x-lua"),
    ".r": _code("r", "text/x-r"),
    ".pl": _code("perl", "text/x-perl"),
    ".pm": _code("perl", "text/x-perl"),
    ".dart": _code("dart", "text/x-dart"),
    ".css": _code("css", "text/css"),
    ".scss": _code("scss", "text/x-scss"),
    ".sass": _code("sass", "text/x-sass"),
    ".less": _code("less", "text/x-less"),
    ".vue": _code("vue", "text/x-vue"),
    ".svelte": _code("svelte", "text/x-svelte"),
    ".m": _code("objectivec", "text/x-objectivec"),
    ".ex": _code("elixir", "text/x-elixir"),
    ".exs": _code("elixir", "text/x-elixir"),
    ".erl": _code("erlang", "text/x-erlang"),
    ".hs": _code("haskell", "text/x-haskell"),
    ".clj": _code("clojure", "text/x-clojure"),
    ".jl": _code("julia", "text/x-julia"),
    ".zig": _code("zig", "text/x-zig"),
    ".tf": _code("hcl", "text/x-hcl"),
    ".proto": _code("protobuf", "text/x-protobuf"),
    ".graphql": _code("graphql", "application/graphql"),
    ".gradle": _code("groovy", "text/x-groovy"),
    ".groovy": _code("groovy", "text/x-groovy"),
    ".dockerfile": _code("dockerfile", "text/x-dockerfile"),
    ".mk": _code("makefile", "text/x-makefile"),
    # text
    ".txt": _text("text"),
    ".text": _text("text"),
    ".md": _text("markdown", "text/markdown"),
    ".markdown": _text("markdown", "text/markdown"),
    ".rst": _text("rst", "text/x-rst"),
    ".adoc": _text("asciidoc", "text/asciidoc"),
    ".tex": _text("latex", "text/x-tex"),
    ".log": _text("log"),
    ".ini": _text("ini"),
    ".cfg": _text("ini"),
    ".conf": _text("conf"),
    ".env": _text("env"),
    ".properties": _text("properties"),
    ".srt": _text("subtitles", "application/x-subrip"),
    ".vtt": _text("subtitles", "text/vtt"),
    ".diff": _text("diff", "text/x-diff"),
    ".patch": _text("diff", "text/x-diff"),
    # tabular
    ".csv": Format("csv", "tabular", "text/csv"),
    ".tsv": Format("tsv", "tabular", "text/tab-separated-values"),
    ".tab": Format("tsv", "tabular", "text/tab-separated-values"),
    ".xlsx": Format(
        "xlsx", "tabular", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    ),
    ".xlsm": Format("xlsm", "tabular", "application/vnd.ms-excel.sheet.macroEnabled.12"),
    ".xls": Format("xls", "tabular", "application/vnd.ms-excel"),
    ".ods": Format("ods", "tabular", "application/vnd.oasis.opendocument.spreadsheet"),
    # structured
    ".json": Format("json", "structured", "application/json"),
    ".jsonl": Format("jsonl", "structured", "application/x-ndjson"),
    ".ndjson": Format("jsonl", "structured", "application/x-ndjson"),
    ".geojson": Format("json", "structured", "application/geo+json"),
    ".yaml": Format("yaml", "structured", "application/yaml"),
    ".yml": Format("yaml", "structured", "application/yaml"),
    ".toml": Format("toml", "structured", "application/toml"),
    ".xml": Format("xml", "structured", "application/xml"),
    ".svg": Format("xml", "structured", "image/svg+xml"),
    ".rss": Format("xml", "structured", "application/rss+xml"),
    ".atom": Format("xml", "structured", "application/atom+xml"),
    # documents
    ".pdf": Format("pdf", "document", "application/pdf"),
    ".docx": Format(
        "docx",
        "document",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    ".pptx": Format(
        "pptx",
        "document",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ),
    ".html": Format("html", "document", "text/html"),
    ".htm": Format("html", "document", "text/html"),
    ".xhtml": Format("html", "document", "application/xhtml+xml"),
    ".epub": Format("epub", "document", "application/epub+zip"),
    ".odt": Format("odt", "document", "application/vnd.oasis.opendocument.text"),
    ".rtf": Format("rtf", "document", "application/rtf"),
    ".msg": Format("msg", "document", "application/vnd.ms-outlook"),
    ".ipynb": Format("ipynb", "document", "application/x-ipynb+json"),
    # archives: listed, and their supported members read (see `archive`)
    ".zip": Format("zip", "document", "application/zip"),
    # images
    ".png": Format("png", "image", "image/png"),
    ".jpg": Format("jpeg", "image", "image/jpeg"),
    ".jpeg": Format("jpeg", "image", "image/jpeg"),
    ".jpe": Format("jpeg", "image", "image/jpeg"),
    ".gif": Format("gif", "image", "image/gif"),
    ".webp": Format("webp", "image", "image/webp"),
    ".bmp": Format("bmp", "image", "image/bmp"),
    ".tif": Format("tiff", "image", "image/tiff"),
    ".tiff": Format("tiff", "image", "image/tiff"),
    # audio
    ".mp3": Format("mp3", "audio", "audio/mpeg"),
    ".wav": Format("wav", "audio", "audio/wav"),
    ".m4a": Format("m4a", "audio", "audio/mp4"),
    ".flac": Format("flac", "audio", "audio/flac"),
    ".ogg": Format("ogg", "audio", "audio/ogg"),
    ".oga": Format("ogg", "audio", "audio/ogg"),
    ".opus": Format("opus", "audio", "audio/opus"),
}

# Names without an extension that are still well-known text or code.
BARE_NAMES: dict[str, Format] = {
    "dockerfile": _code("dockerfile", "text/x-dockerfile"),
    "makefile": _code("makefile", "text/x-makefile"),
    "gnumakefile": _code("makefile", "text/x-makefile"),
    "jenkinsfile": _code("groovy", "text/x-groovy"),
    "gemfile": _code("ruby", "text/x-ruby"),
    "rakefile": _code("ruby", "text/x-ruby"),
    "vagrantfile": _code("ruby", "text/x-ruby"),
    "procfile": _text("text"),
    "readme": _text("text"),
    "license": _text("text"),
    "copying": _text("text"),
    "changelog": _text("text"),
    ".gitignore": _text("text"),
    ".dockerignore": _text("text"),
    ".editorconfig": _text("ini"),
    ".env": _text("env"),
}

# The language tag written on a fenced code block, where it differs from file_type.
FENCE_LANGUAGE: dict[str, str] = {
    "shell": "bash",
    "objectivec": "objectivec",
    "jsx": "jsx",
    "tsx": "tsx",
}


def by_file_type(file_type: str) -> Format:
    """The table row of the first extension with this file_type (used for content sniffing)."""
    for fmt in EXTENSIONS.values():
        if fmt.file_type == file_type:
            return fmt
    raise KeyError(file_type)


TEXT = _text("text")
UNSUPPORTED_BINARY = Format("binary", "unsupported", "application/octet-stream")
EXECUTABLE = Format("executable", "unsupported", "application/x-executable")
ZIP = EXTENSIONS[".zip"]
# a zip whose name claims another zip-based format (a `.docx` with no `word/` inside)
MISNAMED_ZIP = Format("zip-misnamed", "unsupported", "application/zip")
DAMAGED_ZIP = Format("zip-damaged", "unsupported", "application/zip")
OLE2 = Format("ole2", "unsupported", "application/x-ole-storage")

# Types whose content check is "decodes as text", not a magic number.
TEXTUAL_CATEGORIES = frozenset({"text", "code", "structured"})
TEXTUAL_TYPES = frozenset({"csv", "tsv", "html", "rtf", "ipynb"})
