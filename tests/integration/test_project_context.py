"""The project slot of `GET /context` through the real queue (docs/projects.md, issue 9): a
real Valkey, a real `celery worker`, the API under uvicorn, SQLite and PostgreSQL.

A project of real files (a 45-page PDF, a DOCX, a CSV, a Markdown file) is processed and
indexed by the worker. A conversation naming it gets, with a large-window model, every
file whole; with gpt-4 the best chunks, and the question whose answer is only on page 40
brings that page's chunk, cited with `source: "project"` and page 40. Both formats pass
the SDKs' own types and an independent recount.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.api.context_checks import check
from tests.support.files import upload, wait_file_done
from tests.support.project_files import FACT, FACT_PAGE, FACT_QUESTION, project_files

pytestmark = pytest.mark.integration

BOTH_BACKENDS = pytest.mark.parametrize(
    "stack", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True
)
INSTRUCTIONS = "Answer from the plant's documents and cite them."


def _context(client: Any, cid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params=params)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    check(answer)
    return answer


def _p_text(answer: dict[str, Any]) -> str:
    """The P message's text (it opens with the project's instructions)."""
    for message in answer["messages"]:
        content = message["content"]
        blocks = [{"text": content}] if isinstance(content, str) else content or []
        for block in blocks:
            if str(block.get("text", "")).startswith(INSTRUCTIONS):
                return str(block["text"])
    raise AssertionError("no P message in the context")


def _documents(answer: dict[str, Any]) -> list[dict[str, Any]]:
    text = _p_text(answer)
    documents: list[dict[str, Any]] = json.loads(text[len(INSTRUCTIONS) :])["documents"]
    return documents


@BOTH_BACKENDS
def test_the_project_slot_whole_or_by_chunks(stack, worker, client) -> None:
    pid = client.post("/v1/projects", json={"name": "plant", "instructions": INSTRUCTIONS})
    pid = pid.json()["id"]
    files = {
        name: wait_file_done(
            client, upload(client, name, data, content_type=ctype, project_id=pid)["id"]
        )
        for name, (data, ctype) in project_files(45).items()
    }
    assert all(f["status"] == "ready" for f in files.values())
    pdf = files["manual.pdf"]
    cid = client.post("/v1/conversations", json={"project_id": pid}).json()["id"]
    r = client.post(
        f"/v1/conversations/{cid}/messages",
        json={"messages": [{"role": "user", "content": FACT_QUESTION}]},
    )
    assert r.status_code == 201

    # a large window: every ready file whole
    for fmt in ("openai", "anthropic"):
        whole = _context(client, cid, model="gpt-4o", format=fmt)
        titles = sorted(d["title"] for d in _documents(whole))
        assert titles == sorted(files)
        assert {c["source"] for c in whole["citations"]} == {"project"}
        assert all(c["chunk"] is None for c in whole["citations"])
        assert whole["token_breakdown"]["project"] > 0
    # gpt-4 (8k): the best chunks, and page 40's comes first
    for fmt in ("openai", "anthropic"):
        small = _context(client, cid, model="gpt-4", format=fmt)
        documents = _documents(small)
        assert 0 < len(documents) < 20
        assert FACT in documents[0]["contents"] and "page 40" in documents[0]["metadata"]
        cited = {c["citation_id"]: c for c in small["citations"]}
        first = cited[documents[0]["citation_id"]]
        assert first["source"] == "project" and first["file_id"] == pdf["id"]
        assert first["chunk"]["page"] == FACT_PAGE and isinstance(first["chunk"]["index"], int)
        budget = small["budget_tokens"]
        assert small["token_breakdown"]["project"] <= budget // 2
    # the request's query wins over the newest user message
    other = _context(client, cid, model="gpt-4", query="Zephyrine gasket stock")
    assert "Zephyrine" in _documents(other)[0]["contents"]
    # citation ids are stable: the page-40 chunk keeps its id
    again = _context(client, cid, model="gpt-4")
    assert again["citations"][0] == small["citations"][0]
