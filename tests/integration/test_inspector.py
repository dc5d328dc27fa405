"""The inspector at /ui in a real headless browser: Debian's chromium (apt, never a
download) driven by Playwright, against a real stack (Valkey, a Celery worker, the API
under uvicorn, SQLite).

The conversation has a processed document (truncated) and image, a compaction, memory
(goal with subtasks, a decision, an error pattern past its alert) and a sliding window
that removes messages. The test signs in through the form, then checks the page against
the API's own answers: the bar's segments (labels and tokens equal, widths proportional
to `token_breakdown`), the removed and summarised marks, the files, the memory; then the
files page going live over the events stream. The key must never reach a URL or
localStorage. `CONTEXTQ_UPDATE_SCREENSHOT=1` writes the screenshot to docs/inspector.png
(the README's); otherwise it goes to the test's temp dir. `CONTEXTQ_CHROMIUM` names
another chromium binary; a missing one skips the test outside CI and fails it under
`CI=true` (tests/support/system_packages.py).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from api.schemas.context import ContextAnswer, MemorySnapshot
from tests.support.files import upload, wait_file_done
from tests.support.procs import wait_until
from tests.support.system_packages import require

pytestmark = pytest.mark.integration

CHROMIUM = os.environ.get("CONTEXTQ_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_INSTALL = "apt-get install -y chromium fonts-dejavu-core"
LAUNCH_ARGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CATEGORIES = (
    "system",
    "custom_agent",
    "summary",
    "project",
    "files",
    "history",
    "reasoning",
    "reminders",
)
LABELS = {
    "system": "System",
    "custom_agent": "Custom agent",
    "summary": "Summary",
    "project": "Project",
    "files": "Files",
    "history": "History",
    "reasoning": "Reasoning",
    "reminders": "Reminders",
}
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "inspector.png"


@pytest.fixture(scope="module", autouse=True)
def _chromium_installed() -> None:
    """Before the stack starts: the browser is there (else skip, or fail under CI)."""
    require(
        Path(CHROMIUM).exists(), what=f"Debian's chromium ({CHROMIUM})", install=CHROMIUM_INSTALL
    )


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator[Any]:
    """A page of a fresh chromium profile (its own --user-data-dir under tmp_path)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=LAUNCH_ARGS,
            viewport={"width": 1280, "height": 1000},
            device_scale_factor=1,
        )
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def _png(width: int, height: int) -> bytes:
    image = Image.new("RGB", (width, height), (30, 110, 200))
    for x in range(0, width, 8):
        for y in range(height // 3, height // 2):
            image.putpixel((x, y), (250, 200, 40))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _document() -> bytes:
    sections = [
        f"## Section {i}\n\n"
        + " ".join(f"Finding {i}.{j} about the cache layer." for j in range(30))
        for i in range(40)
    ]
    return ("# Incident report\n\n" + "\n\n".join(sections)).encode()


def _conversation(client: Any) -> tuple[str, dict[str, str]]:
    cid = client.post(
        "/v1/conversations",
        json={
            "title": "Fix the flaky cache tests",
            "model": "gpt-4o",
            "system_prompt": "You are a careful coding agent.",
            "custom_agent_prompt": "Prefer small, reviewed changes.",
            "reminders": ["Run the tests before you answer."],
            "context_strategy": "sliding_window",
            "context_options": {"window_size": 6},
            "context_threshold": 0.01,  # filter on every read, so the window removes some
        },
    ).json()["id"]
    doc = upload(
        client, "report.md", _document(), content_type="text/markdown", conversation_id=cid
    )
    image = upload(
        client, "chart.png", _png(320, 200), content_type="image/png", conversation_id=cid
    )
    files = {"doc": doc["id"], "image": image["id"]}
    for file_id in files.values():
        assert wait_file_done(client, file_id)["status"] == "ready"
    return cid, files


def _history(client: Any, cid: str) -> None:
    turns: list[dict[str, Any]] = [{"role": "user", "content": "Find why the cache tests flake."}]
    for i in range(1, 16):
        said = f"Step {i}: looked at module {i}."
        if i == 2:  # message #4: the decision the memory records below, citing it
            said = "Step 2: use a per-test cache dir, so the tests share no state."
        turns.append({"role": "assistant", "content": said})
        turns.append({"role": "user", "content": f"Go on with module {i + 1}.", "pinned": i == 3})
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": turns})
    assert r.status_code == 201, r.text
    base = f"/v1/conversations/{cid}/memory"
    assert (
        client.put(
            f"{base}/goal",
            json={
                "text": "Make the cache tests pass",
                "subtasks": ["reproduce", "fix", "add a test"],
                "seqs": [1],  # the first message states it
            },
        ).status_code
        == 200
    )
    assert client.post(f"{base}/subtasks/reproduce/complete").status_code == 200
    decision = {
        "decision": "Use a per-test cache dir",
        "rationale": "no shared state",
        "impact": "high",
        "seqs": [4],
    }
    assert client.post(f"{base}/decisions", json=decision).status_code in (200, 201)
    for n in (1, 2, 3):
        assert (
            client.post(f"{base}/errors", json={"error": f"Timeout after {n}0 s"}).status_code
            == 200
        )


def _compact(client: Any, cid: str, files: dict[str, str]) -> dict[str, Any]:
    """Compact, then a newest turn after it that attaches the files."""
    job_id = client.post(f"/v1/conversations/{cid}/compact").json()["job_id"]

    def done() -> dict[str, Any] | None:
        job = client.get(f"/v1/jobs/{job_id}").json()
        return job if job["status"] in ("succeeded", "failed") else None

    job = wait_until(done, timeout=90, interval=0.2, what="compaction")
    assert job["status"] == "succeeded", job
    more = [
        {"role": "assistant", "content": "The fix is in."},
        {
            "role": "user",
            "content": "Read the report and the chart.",
            "file_ids": list(files.values()),
        },
    ]
    assert (
        client.post(f"/v1/conversations/{cid}/messages", json={"messages": more}).status_code == 201
    )
    return client.get(f"/v1/conversations/{cid}/compactions").json()["data"][0]


def _sign_in(page: Any, base_url: str, key: str) -> None:
    page.goto(f"{base_url}/ui")
    assert not page.get_by_role("link", name="Files").is_visible()  # no navigation before
    page.get_by_label("API key").fill("not-a-key")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("was not accepted (401)").wait_for()
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Conversations").wait_for()
    assert page.get_by_role("button", name="Log out").is_visible()


def _check_bar(page: Any, ctx: dict[str, Any]) -> None:
    breakdown = ctx["token_breakdown"]
    total = sum(breakdown[c] for c in CATEGORIES)
    assert total == ctx["token_count"]
    bar = page.locator("#token-bar")
    bar_width = bar.evaluate("el => el.clientWidth")
    segments = bar.locator("[data-category]")
    shown = {}
    for i in range(segments.count()):
        seg = segments.nth(i)
        name = seg.get_attribute("data-category")
        shown[name] = (
            int(seg.get_attribute("data-tokens")),
            seg.evaluate("el => el.getBoundingClientRect().width"),
        )
        assert seg.get_attribute("title").startswith(f"{LABELS[name]}: {breakdown[name]:,} tokens")
    assert set(shown) == {c for c in CATEGORIES if breakdown[c] > 0}
    assert {"system", "summary", "files", "history", "reminders"} <= set(shown)
    for name, (tokens, width) in shown.items():
        assert tokens == breakdown[name]
        expected = bar_width * tokens / total
        assert abs(width - max(expected, 2)) <= 2.5, (name, width, expected)
    legend = page.locator("#token-legend li")
    assert legend.count() == len(CATEGORIES)
    for i, name in enumerate(CATEGORIES):
        item = legend.nth(i)
        assert item.get_attribute("data-category") == name
        assert item.locator(".legend-label").inner_text() == LABELS[name]
        assert item.locator(".legend-tokens").inner_text() == f"{breakdown[name]:,}"
    meter = page.locator("#window-meter")
    assert meter.get_attribute("aria-valuenow") == str(ctx["token_count"])
    assert meter.get_attribute("aria-valuemax") == str(ctx["context_limit"])
    assert f"{ctx['budget_tokens']:,}" in page.locator(".meter-caption").inner_text()


def _check_marks(
    page: Any, ctx: dict[str, Any], history: list[dict[str, Any]], compaction: dict[str, Any]
) -> None:
    assert ctx["compaction_id"] == compaction["id"] and ctx["removed_message_ids"]
    for message in history:
        marks = (
            page.locator(f'[data-message-id="{message["id"]}"]').get_attribute("data-marks").split()
        )
        assert ("removed" in marks) == (message["id"] in ctx["removed_message_ids"]), message
        covered = message["seq"] <= compaction["through_seq"] and not message["pinned"]
        assert ("summarised" in marks) == covered, message
    summary = page.locator('#assembled [data-kind="summary"]')
    assert summary.count() == 1, [(m["role"], str(m.get("content"))[:80]) for m in ctx["messages"]]
    assert f"#1–#{compaction['through_seq']}" in summary.locator(".mark-note").inner_text()
    assert page.locator("#assembled li").count() == len(ctx["messages"])
    assert page.locator("#compactions [data-compaction-id]").count() == 1
    assert "used by this context" in page.locator("#compactions").inner_text()


def _check_files_and_memory(page: Any, files: dict[str, str], client: Any) -> None:
    doc = client.get(f"/v1/files/{files['doc']}").json()
    assert doc["truncation"]["truncated"]
    row = page.locator(f'#files-title ~ table tr[data-file-id="{files["doc"]}"]')
    text = row.inner_text()
    assert (
        "ready" in text
        and f"{doc['token_count']:,}" in text
        and doc["truncation"]["summary"] in text
    )
    assert (
        page.locator('tr[data-file-id="' + files["image"] + '"]').get_attribute("data-status")
        == "ready"
    )
    thumbs = page.locator("#assembled img.thumb")
    assert thumbs.count() == 1
    assert thumbs.evaluate("img => img.complete && img.naturalWidth") > 0  # the data: URL loaded
    assert page.locator('#assembled [data-kind="reminders"]').count() == 1
    assert page.locator('#assembled [data-kind="custom agent"]').count() == 1
    assert page.locator("#assembled details.documents summary").inner_text().count("report.md") == 1
    memory = page.locator("#memory").inner_text()
    assert "Make the cache tests pass" in memory and "1 of 3 done" in memory
    assert page.locator("#goal-progress").get_attribute("value") == "33"
    assert (
        page.locator("#memory .badge-alert").count() == 1 and "Use a per-test cache dir" in memory
    )


def _check_provenance_links(page: Any, client: Any, cid: str, compaction: dict[str, Any]) -> None:
    """Every (#n) of the summary is a link; one opens the original, as ?seqs= gives it."""
    from contextq.history.provenance import summary_items

    items = summary_items(compaction["summary"])
    cited = sorted({s for item in items for s in item.seqs})
    assert cited, compaction["summary"]
    assert compaction["unsourced_items"] == sum(1 for i in items if not i.seqs)
    timeline = page.locator("#compactions")
    assert f"{compaction['unsourced_items']} unsourced" in timeline.inner_text()
    timeline.locator("details summary").first.click()
    links = timeline.locator("a.seq-link")
    shown = {int(links.nth(i).get_attribute("data-seq")) for i in range(links.count())}
    assert set(cited) <= shown  # every cited seq of every item is a link
    assert page.locator('#assembled [data-kind="summary"] a.seq-link').count() == links.count()
    seq = cited[-1]
    timeline.locator(f'a.seq-link[data-seq="{seq}"]').first.click()
    dialog = page.locator("dialog#original[open]")
    dialog.locator(f'article.original[data-seq="{seq}"]').wait_for()
    [original] = client.get(f"/v1/conversations/{cid}/messages", params={"seqs": seq}).json()[
        "data"
    ]
    assert dialog.locator(".original-text").inner_text() == original["content"]
    assert dialog.get_by_role("heading", name=f"Message #{seq}").is_visible()
    dialog.get_by_role("button", name="Close").click()
    page.locator("dialog#original[open]").wait_for(state="detached")


def _check_files_page_live(page: Any, client: Any, cid: str) -> None:
    page.get_by_role("link", name="Files").click()
    page.locator('#live-status[data-mode="live"]').wait_for(timeout=15_000)
    new = upload(
        client, "notes.txt", b"late notes\n" * 50, content_type="text/plain", conversation_id=cid
    )
    # the file.ready event brings the row in (the page's slow poll is every 15 s)
    page.locator(f'tr[data-file-id="{new["id"]}"][data-status="ready"]').wait_for(timeout=10_000)


def _check_key_kept_private(page: Any, key: str, urls: list[str]) -> None:
    assert urls and all(key not in u for u in urls)
    assert key not in page.url
    assert page.evaluate("() => localStorage.length") == 0
    assert page.evaluate("() => sessionStorage.getItem('contextq.apiKey')") == key


def test_inspector_shows_what_the_model_will_see(
    stack: Any,
    worker: Any,
    api_server: Any,
    client: Any,
    owner: Any,
    browser_page: Any,
    tmp_path: Path,
) -> None:
    cid, files = _conversation(client)
    _history(client, cid)
    compaction = _compact(client, cid, files)
    ctx = client.get(f"/v1/conversations/{cid}/context").json()
    history = client.get(f"/v1/conversations/{cid}/messages", params={"limit": 1000}).json()["data"]
    ContextAnswer.model_validate(ctx)  # the documented answer, files and compaction included
    MemorySnapshot.model_validate(client.get(f"/v1/conversations/{cid}/memory").json())

    page = browser_page
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    failed: list[tuple[int, str]] = []
    page.on("response", lambda r: failed.append((r.status, r.url)) if r.status >= 400 else None)

    _sign_in(page, api_server.base_url, owner.key)
    page.get_by_role("link", name="Fix the flaky cache tests").click()
    page.locator("#token-bar").wait_for()
    assert re.search(rf"#/conversations/{cid}$", page.url)
    _check_bar(page, ctx)
    _check_marks(page, ctx, history, compaction)
    _check_files_and_memory(page, files, client)
    _check_provenance_links(page, client, cid, compaction)

    shot = tmp_path / "inspector.png"
    page.screenshot(path=str(shot))  # the viewport: the bar and the first messages
    with Image.open(shot) as image:
        assert image.width >= 1000 and image.height >= 600
        if os.environ.get("CONTEXTQ_UPDATE_SCREENSHOT") == "1":  # small: a palette
            image.convert("RGB").quantize(colors=128).save(SCREENSHOT, optimize=True)

    # another model: the page asks the context for it
    page.get_by_label("Model", exact=True).fill("gpt-3.5-turbo")
    page.get_by_role("button", name="Show context").click()
    page.get_by_role("heading", name="Context for gpt-3.5-turbo").wait_for()
    small = client.get(f"/v1/conversations/{cid}/context", params={"model": "gpt-3.5-turbo"}).json()
    assert page.locator("#window-meter").get_attribute("aria-valuemax") == str(
        small["context_limit"]
    )

    _check_files_page_live(page, client, cid)
    _check_key_kept_private(page, owner.key, urls)
    assert not errors, errors
    # the one refused request is the sign-in with the wrong key
    assert [status for status, _ in failed] == [401], failed

    page.get_by_role("button", name="Log out").click()
    page.get_by_label("API key").wait_for()
    assert page.evaluate("() => sessionStorage.length") == 0
