"""Real files through the real queue into the context of a real conversation
(docs/history.md#how-files-are-given-to-the-model).

Real Valkey, a real `celery worker`, the API under uvicorn, SQLite: a DOCX, a PDF, a CSV,
a PNG and an MP3 are uploaded, processed by the worker and attached to a user message.
The context carries their sentinels in the documents JSON, the image as a decodable
image part, the audio as `input_audio` for a model that takes audio (else a text line,
listed), with citation ids that stay put over the following turns. Files not yet usable
are listed with a reason; every answer passes the SDK types and an independent recount.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from tests.api.context_checks import check
from tests.engine.files import media_samples as media
from tests.engine.files.conftest import Samples
from tests.support.files import upload, wait_file_done

pytestmark = pytest.mark.integration

M = media.SENTINEL
S = Samples.sentinel


def _ready(client: Any, name: str, data: bytes) -> dict[str, Any]:
    body = wait_file_done(client, upload(client, name, data)["id"], timeout=120)
    assert body["status"] == "ready", body
    return body


def _context(client: Any, cid: str, audio: Any = None, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer, audio=audio)
    return answer


def _post(client: Any, cid: str, *messages: dict[str, Any]) -> None:
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": list(messages)})
    assert r.status_code == 201, r.text


def _documents(answer: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for m in answer["messages"]:
        blocks = (
            m["content"]
            if isinstance(m["content"], list)
            else [{"type": "text", "text": m["content"]}]
        )
        for b in blocks:
            if b.get("type") == "text" and b["text"].startswith('{"documents"'):
                found += json.loads(b["text"])["documents"]
    return found


def _image_data(answer: dict[str, Any]) -> list[str]:
    out = []
    for m in answer["messages"]:
        for b in m["content"] if isinstance(m["content"], list) else ():
            if b["type"] == "image_url":
                out.append(b["image_url"]["url"].split(",", 1)[1])
            elif b["type"] == "image":
                out.append(b["source"]["data"])
    return out


def test_real_files_end_to_end_with_stable_citations(stack, worker, client) -> None:
    docx = _ready(client, "report.docx", media.docx_bytes())
    pdf = _ready(client, "paper.pdf", media.pdf_bytes())
    csv = _ready(client, "table.csv", Samples.csv(rows=40))
    png = _ready(client, "chart.png", media.image_bytes("PNG", (640, 480), noise=True))
    mp3 = _ready(client, "memo.mp3", media.encoded_audio_bytes("mp3", "libmp3lame", 1.0))
    ids = [docx["id"], pdf["id"], csv["id"], png["id"], mp3["id"]]
    cid = client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    _post(client, cid, {"role": "user", "content": "Summarise these.", "file_ids": ids})

    answer = _context(client, cid)
    documents = _documents(answer)
    assert [d["title"] for d in documents] == ["report.docx", "paper.pdf", "table.csv"]
    assert M in documents[0]["contents"] and M in documents[1]["contents"]
    assert f"{S}-first" in documents[2]["contents"]
    assert [d["citation_id"] for d in documents] == [1, 2, 3]
    assert all(d["metadata"] for d in documents)
    [image] = _image_data(answer)
    with Image.open(io.BytesIO(base64.b64decode(image))) as decoded:
        assert decoded.size == (png["metadata"]["width"], png["metadata"]["height"])
    # gpt-4o takes no audio: a text line names it, and it is listed with the reason
    assert answer["failed_file_ids"] == [mp3["id"]]
    assert "takes no audio" in answer["file_notes"][0]["reason"]
    assert answer["token_breakdown"]["files"] > 0
    cited = {c["file_id"]: c["citation_id"] for c in answer["citations"]}
    assert cited == {docx["id"]: 1, pdf["id"]: 2, csv["id"]: 3}

    anthropic = _context(client, cid, model="claude-sonnet-4-5", format="anthropic")
    assert len(_image_data(anthropic)) == 1 and _documents(anthropic) == documents

    seconds = {mp3_data: mp3["metadata"]["duration_s"] for mp3_data in _audio(client, mp3)}
    gemini = _context(client, cid, audio=seconds.__getitem__, model="gemini-2.5-flash")
    parts = [b for m in gemini["messages"] if isinstance(m["content"], list) for b in m["content"]]
    audio = [b for b in parts if b["type"] == "input_audio"]
    assert len(audio) == 1 and audio[0]["input_audio"]["format"] == "mp3"
    assert gemini["failed_file_ids"] == []

    for turn in range(3):  # citation ids stay put; a new document gets the next number
        new_ids = []
        if turn == 2:
            new_ids = [_ready(client, "later.md", f"# Later\n\n{M} again\n".encode())["id"]]
        _post(
            client,
            cid,
            {"role": "assistant", "content": f"Answer {turn} [1][2]."},
            {"role": "user", "content": f"Follow-up {turn}", "file_ids": new_ids},
        )
        later = _context(client, cid)
        got = {c["file_id"]: c["citation_id"] for c in later["citations"]}
        assert {k: got[k] for k in cited} == cited
        if new_ids:
            assert got[new_ids[0]] == 4


def _audio(client: Any, mp3: dict[str, Any]) -> list[str]:
    raw = client.get(f"/v1/files/{mp3['id']}/content").content
    return [base64.b64encode(raw).decode("ascii")]


def test_files_not_yet_usable_are_listed_with_a_reason(stack, client, worker_factory) -> None:
    pending = upload(client, "later.txt", f"{S} arrives later\n".encode())  # no worker yet
    cid = client.post("/v1/conversations", json={"model": "gpt-4o"}).json()["id"]
    _post(client, cid, {"role": "user", "content": "Read it.", "file_ids": [pending["id"]]})
    answer = _context(client, cid)
    assert answer["pending_file_ids"] == [pending["id"]]
    assert "being processed" in answer["file_notes"][0]["reason"]
    worker_factory()
    assert wait_file_done(client, pending["id"], timeout=120)["status"] == "ready"
    answer = _context(client, cid)
    assert answer["pending_file_ids"] == [] and S in _documents(answer)[0]["contents"]

    failed = wait_file_done(client, upload(client, "tool.bin", Samples.elf())["id"])
    assert failed["status"] == "failed"
    deleted = _ready(client, "gone.txt", b"soon gone\n")
    big, bigger = (  # each cut to MAX_TOKENS_PER_FILE (5 000): together over gpt-4's room
        _ready(client, f"big{n}.txt", _lines(n).encode()) for n in (1, 2)
    )
    png = _ready(client, "photo.png", media.image_bytes("PNG"))
    cid = client.post("/v1/conversations", json={"model": "gpt-4"}).json()["id"]
    _post(
        client, cid, {"role": "user", "content": "Older", "file_ids": [failed["id"], deleted["id"]]}
    )
    _post(client, cid, {"role": "assistant", "content": "Noted."})
    newest = [big["id"], bigger["id"], png["id"]]
    _post(client, cid, {"role": "user", "content": "Newest", "file_ids": newest})
    assert client.delete(f"/v1/files/{deleted['id']}").status_code == 204
    answer = _context(client, cid)
    reasons = {n["file_id"]: n["reason"] for n in answer["file_notes"]}
    assert set(answer["failed_file_ids"]) == {failed["id"], deleted["id"], *newest}
    assert "failed to process" in reasons[failed["id"]]
    assert "deleted" in reasons[deleted["id"]]
    assert "does not fit" in reasons[big["id"]] and "does not fit" in reasons[bigger["id"]]
    assert "takes no image input" in reasons[png["id"]]
    assert answer["filtered"] and answer["token_count"] <= answer["budget_tokens"]
    assert answer["citations"] == []


def _lines(n: int) -> str:
    return "\n".join(f"file {n} line {i} " + "alpha beta gamma delta " * 40 for i in range(300))
