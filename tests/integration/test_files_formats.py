"""One file of every supported format through the real queue.

Real Valkey, a real `celery worker` subprocess, the API under uvicorn and a
SQLite file: each sample (made by a real library, with a sentinel) is uploaded
over HTTP and must end `ready` with its category, file type and the sentinel
in `GET /content` (or an image/audio artefact of the right type).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.engine.files import media_samples as media
from tests.engine.files.conftest import Samples
from tests.support.files import upload, wait_file_done

pytestmark = pytest.mark.integration

S = Samples.sentinel
M = media.SENTINEL
TABLE = [["name", "value"], [S, 1], ["second", 2]]

Case = tuple[str, Callable[[], bytes], str, str, str]  # name, bytes, category, type, needle

TEXT_AND_CODE: list[Case] = [
    ("notes.txt", lambda: f"plain text {S}\n".encode(), "text", "text", S),
    ("readme.md", lambda: f"# Title\n\n{S}\n".encode(), "text", "markdown", S),
    ("app.log", lambda: f"2026-11-22 INFO started {S}\n".encode(), "text", "log", S),
    ("main.py", lambda: f"print('{S}')\n".encode(), "code", "python", S),
    ("index.js", lambda: f"console.log('{S}');\n".encode(), "code", "javascript", S),
    ("app.ts", lambda: f"const s: string = '{S}';\n".encode(), "code", "typescript", S),
    ("Main.java", lambda: f'class Main {{ String s = "{S}"; }}\n'.encode(), "code", "java", S),
    ("main.go", lambda: f'package main\nvar s = "{S}"\n'.encode(), "code", "go", S),
    ("lib.rs", lambda: f'const S: &str = "{S}";\n'.encode(), "code", "rust", S),
    ("main.c", lambda: f'const char *s = "{S}";\n'.encode(), "code", "c", S),
    ("query.sql", lambda: f"SELECT '{S}';\n".encode(), "code", "sql", S),
    ("run.sh", lambda: f"#!/bin/sh\necho {S}\n".encode(), "code", "shell", S),
]
TABLES: list[Case] = [
    ("data.csv", lambda: Samples.csv(rows=40), "tabular", "csv", f"{S}-first"),
    ("data.tsv", lambda: Samples.csv(rows=40, delimiter="\t"), "tabular", "tsv", f"{S}-last"),
    ("book.xlsx", lambda: Samples.xlsx({"Sheet": TABLE}), "tabular", "xlsx", S),
    ("old.xls", lambda: Samples.xls({"Legacy": TABLE}), "tabular", "xls", S),
    ("calc.ods", lambda: Samples.ods({"Calc": TABLE}), "tabular", "ods", S),
]
STRUCTURED: list[Case] = [
    (
        "data.json",
        lambda: Samples.json({"key": S, "items": list(range(80))}),
        "structured",
        "json",
        S,
    ),
    ("rows.jsonl", lambda: f'{{"a": "{S}"}}\n{{"a": 2}}\n'.encode(), "structured", "jsonl", S),
    ("conf.yaml", lambda: f"key: {S}\nlist: [1, 2]\n".encode(), "structured", "yaml", S),
    ("conf.toml", lambda: f'key = "{S}"\n'.encode(), "structured", "toml", S),
    ("doc.xml", lambda: f"<root><item>{S}</item></root>".encode(), "structured", "xml", S),
]
DOCUMENTS: list[Case] = [
    ("report.pdf", media.pdf_bytes, "document", "pdf", M),
    ("report.docx", media.docx_bytes, "document", "docx", M),
    ("deck.pptx", media.pptx_bytes, "document", "pptx", M),
    ("page.html", media.html_bytes, "document", "html", M),
    ("book.epub", media.epub_bytes, "document", "epub", M),
    ("letter.odt", media.odt_bytes, "document", "odt", M),
    ("letter.rtf", media.rtf_bytes, "document", "rtf", M),
    ("mail.msg", media.msg_bytes, "document", "msg", M),
]
IMAGES: list[Case] = [
    (f"photo.{ext}", (lambda fmt=fmt: media.image_bytes(fmt)), "image", ftype, "image/")
    for ext, fmt, ftype in [
        ("png", "PNG", "png"),
        ("jpg", "JPEG", "jpeg"),
        ("gif", "GIF", "gif"),
        ("webp", "WEBP", "webp"),
        ("bmp", "BMP", "bmp"),
        ("tiff", "TIFF", "tiff"),
    ]
]
AUDIO: list[Case] = [
    ("tone.wav", lambda: media.wav_bytes(0.5), "audio", "wav", "audio/"),
    (
        "tone.mp3",
        lambda: media.encoded_audio_bytes("mp3", "libmp3lame", 0.5),
        "audio",
        "mp3",
        "audio/",
    ),
    (
        "tone.flac",
        lambda: media.encoded_audio_bytes("flac", "flac", 0.5),
        "audio",
        "flac",
        "audio/",
    ),
    (
        "tone.ogg",
        lambda: media.encoded_audio_bytes("ogg", "flac", 0.5, channels=1),
        "audio",
        "ogg",
        "audio/",
    ),
    (
        "tone.opus",
        lambda: media.encoded_audio_bytes("ogg", "libopus", 0.5, rate=48000),
        "audio",
        "opus",
        "audio/",
    ),
    ("tone.m4a", lambda: media.encoded_audio_bytes("ipod", "aac", 0.5), "audio", "m4a", "audio/"),
]
ALL = TEXT_AND_CODE + TABLES + STRUCTURED + DOCUMENTS + IMAGES + AUDIO


def test_every_format_through_the_real_queue(stack, worker, client, owner) -> None:
    uploads = [(case, upload(client, case[0], case[1]())) for case in ALL]
    failures = []
    for (name, _make, category, file_type, needle), up in uploads:
        body = wait_file_done(client, up["id"], timeout=120)
        got = (body["status"], body["category"], body["file_type"])
        if got != ("ready", category, file_type):
            failures.append(f"{name}: {got} error={body['error']!r}")
            continue
        resp = client.get(f"/v1/files/{up['id']}/content")
        if resp.status_code != 200:
            failures.append(f"{name}: /content answered {resp.status_code}")
        elif needle.endswith("/"):
            if not resp.headers["content-type"].startswith(needle):
                failures.append(f"{name}: content type {resp.headers['content-type']}")
        elif needle not in resp.text:
            failures.append(f"{name}: {needle!r} missing from the content")
        if body["token_count"] is None or body["processed_token_count"] is None:
            failures.append(f"{name}: token counts missing")
    assert not failures, "\n".join(failures)
    assert len(ALL) >= 40
