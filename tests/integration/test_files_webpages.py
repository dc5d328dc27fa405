"""Saved web pages through the real upload path (issue 18): uvicorn, a Celery worker,
Valkey, SQLite.

Each kind of page is uploaded over HTTP and must come back `ready` with its content in
`GET …/content` and a `truncation` that says how much of the page was left out and
what; the same search page written to a workspace shows that truncation in
`view=processed`, and its raw bytes — the whole page — read back unchanged.
"""

from __future__ import annotations

import pytest

from tests.engine.files.web_samples import PAGES, google_results_page
from tests.support.files import upload, wait_file_done
from tests.support.workspaces import new_conversation, put_file, ws_url

pytestmark = pytest.mark.integration


def test_every_kind_of_page_through_the_real_queue(stack, worker, client, owner) -> None:
    uploads = [(page, upload(client, page.filename, page.make())) for page in PAGES]
    failures: list[str] = []
    for page, up in uploads:
        body = wait_file_done(client, up["id"], timeout=120)
        if body["status"] != "ready":
            failures.append(f"{page.filename}: {body['status']} {body['error']!r}")
            continue
        text = client.get(f"/v1/files/{up['id']}/content").text
        failures += [f"{page.filename}: {t!r} missing" for t in page.must_include if t not in text]
        failures += [f"{page.filename}: {t!r} sent" for t in page.must_not_include if t in text]
        truncation, meta = body["truncation"], body["metadata"]
        if not truncation["truncated"] or "page chars:" not in truncation["summary"]:
            failures.append(f"{page.filename}: truncation {truncation}")
        if f"[truncated: {truncation['summary']}]" not in text:
            failures.append(f"{page.filename}: the content does not say what was left out")
        if (meta["page_kind"], meta["extraction"]) != (page.kind, page.extraction):
            failures.append(f"{page.filename}: {meta['page_kind']}, {meta['extraction']}")
    assert not failures, "\n".join(failures)


def test_search_page_in_a_workspace_shows_its_truncation_and_keeps_the_whole(
    stack, worker, client
) -> None:
    conv = new_conversation(client)
    data = google_results_page()
    entry = put_file(client, conv, "pages/zebra.html", data)
    done = wait_file_done(client, entry["file_id"], timeout=120)
    assert done["status"] == "ready", done["error"]
    view = client.get(ws_url(conv, "pages/zebra.html"), params={"view": "processed"}).json()
    assert view["truncation"] == done["truncation"] and view["truncation"]["truncated"]
    assert "Why do zebras have stripes?" in view["text"]
    assert "San Diego Zoo" in view["text"]
    raw = client.get(ws_url(conv, "pages/zebra.html"))
    assert raw.content == data, "the whole page stays reachable as the raw file"
    lines = client.get(
        ws_url(conv, "pages/zebra.html"), params={"view": "processed", "offset": 0, "limit": 5}
    ).json()
    assert lines["portion"]["unit"] == "lines" and lines["text"].startswith("# zebra")
