"""The promises about attached files (docs/history.md#how-files-are-given-to-the-model,
docs/context.md#the-newest-turn): nothing dropped silently, the newest turn's files first."""

from __future__ import annotations

import json
from typing import Any

from contextq.assembly import FileView
from contextq.assembly.formats import OPENING_TEXT as ANTHROPIC_OPENING
from contextq.catalog import resolve_model
from tests.engine.assembly.harness.facts import Facts, newest_user
from tests.engine.assembly.harness.oracle import answer_tokens

# the image types a format takes (None: every one the pipeline makes)
IMAGE_TYPES: dict[str, tuple[str, ...] | None] = {
    "anthropic": ("image/png", "image/jpeg", "image/gif", "image/webp"),
    "gemini": ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"),
}


def _sent_file_ids(f: Facts) -> set[str]:
    by_name = {v.filename: fid for fid, v in f.read.case.files.items() if v.filename}
    out = {by_name[d["title"]] for d in f.sent.documents if d.get("title") in by_name}
    for label, after in f.sent.labels:
        name = label.split(": ", 1)[1] if ": " in label else ""
        media = ("image_url", "image", "input_audio", "input_image", "inlineData")
        if after in media and name in by_name:
            out.add(by_name[name])
    return out


def includable(f: Facts, view: FileView) -> bool:
    """Whether the model and format can take the file at all (else it is a note)."""
    if view.status != "ready":
        return False
    if view.category == "image":
        model = resolve_model(f.answer["model"] or None, f.read.settings)
        taken = IMAGE_TYPES.get(f.answer["format"])
        media_ok = taken is None or view.media_type in taken
        return model.takes("image") and bool(view.data_b64) and media_ok
    if view.category == "audio":
        model = resolve_model(f.answer["model"] or None, f.read.settings)
        takes_audio = f.answer["format"] in ("openai", "gemini")  # WAV: both take it
        return takes_audio and model.takes("audio") and bool(view.data_b64)
    return view.text is not None


def files_accounted(f: Facts) -> list[str]:
    """Every file attached to a message sent is sent, pending or failed, with a note."""
    answer, files = f.answer, f.read.case.files
    sent = _sent_file_ids(f)
    pending, failed = set(answer["pending_file_ids"]), set(answer["failed_file_ids"])
    noted = {n["file_id"] for n in answer["file_notes"] if n.get("reason")}
    problems = []
    for m in f.visible:
        if m.role != "user" or not m.file_ids or m.seq not in f.sent.texts:
            continue
        for fid in m.file_ids:
            status = files[fid].status
            listed = pending if status in ("uploaded", "processing") else failed
            if fid in sent and fid in pending | failed:
                problems.append(f"{fid} is sent and listed as pending/failed")
            elif fid not in sent and (fid not in listed or fid not in noted):
                problems.append(
                    f"{fid} ({status}, {files[fid].category}) of {m.id} dropped silently"
                )
    project = f.read.case.project
    if project is not None:
        for fid in project.pending:
            problems += [] if fid in pending else [f"project file {fid} not listed pending"]
        for fid in project.failed:
            problems += [] if fid in failed else [f"project file {fid} not listed failed"]
    return problems


def _entry(view: FileView) -> dict[str, Any]:
    """A documents entry for `view` at its largest: a long citation id, metadata naming
    every fact the engine may name (docs/history.md#how-files-are-given-to-the-model)."""
    metadata = (
        f"{view.category} ({view.file_type}), 99999 pages, 99999 rows; truncated: "
        f"{view.truncation_summary or 'nothing left out'}"
    )
    return {
        "citation_id": 99999,
        "title": view.filename,
        "contents": view.text or "",
        "metadata": metadata,
    }


def _text_node(f: Facts, text: str) -> dict[str, Any]:
    if f.answer["format"] == "anthropic":  # a text block of the merged user message
        return {"type": "text", "text": text}
    if f.answer["format"] == "gemini":  # a text part of the merged user content
        return {"text": text}
    if f.answer["format"] == "responses":
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }
    return {"role": "user", "content": text}


def document_upper_cost(f: Facts, view: FileView, beside: str | None = None) -> int:
    """An upper bound of what adding a document costs as sent: to `beside` (the
    documents JSON its message already sends: one text, whose calibrated count takes
    the largest factor of all its documents), else in a documents text of its own."""
    if beside is None:
        text = json.dumps({"documents": [_entry(view)]}, ensure_ascii=False)
        return answer_tokens(f.answer, _text_node(f, text)) + 12
    entries = json.loads(beside)["documents"]
    grown = json.dumps({"documents": [*entries, _entry(view)]}, ensure_ascii=False)
    return (
        answer_tokens(f.answer, _text_node(f, grown))
        - answer_tokens(f.answer, _text_node(f, beside))
        + 4
    )


def _documents_of(f: Facts, file_ids: list[str]) -> str | None:
    """The documents JSON sent for these files (one message's), if any was."""
    titles = {f.read.case.files[fid].filename for fid in file_ids}
    for text in f.sent.document_texts:
        if all(d.get("title") in titles for d in json.loads(text)["documents"]):
            return text
    return None


def format_slack(f: Facts) -> int:
    """What an answer may leave unused by the engine's conservative measure: the room
    kept for an opening message (Responses: a list left with no item), and for Anthropic
    the merge of consecutive user turns into one (each merged block saves a message
    frame) and two cache breakpoints (docs/history.md#the-ready-to-send-context)."""
    if f.answer["format"] == "responses":
        opening = {"type": "message", "role": "user", "content": []}
        text = {"type": "input_text", "text": ANTHROPIC_OPENING}
        return answer_tokens(f.answer, opening) + answer_tokens(f.answer, text)
    if f.answer["format"] == "gemini":  # the merge saves a frame a part; no marks
        frame = answer_tokens(f.answer, {"role": "user", "parts": []})
        opening = answer_tokens(f.answer, {"text": ANTHROPIC_OPENING})
        merged = sum(
            max(0, sum(1 for p in c["parts"] if "text" in p or "functionResponse" in p) - 1)
            for c in f.answer["contents"]
        )
        return frame + opening + frame * merged
    if f.answer["format"] != "anthropic":
        return 0
    frame = answer_tokens(f.answer, {"role": "user", "content": []})
    mark = answer_tokens(f.answer, {"cache_control": {"type": "ephemeral"}})
    opening = answer_tokens(f.answer, {"type": "text", "text": ANTHROPIC_OPENING})
    merged = 0
    for m in f.answer["messages"]:
        blocks = m["content"] if isinstance(m["content"], list) else []
        texts = [b for b in blocks if b.get("type") in ("text", "tool_result")]
        merged += max(0, len(texts) - 1)
    return frame + opening + 2 * mark + frame * merged


def newest_files_first(f: Facts) -> list[str]:
    """The newest turn's files go in before any older turn's, as many as fit in the
    order attached, never all-or-nothing (docs/context.md#what-is-taken-first). "Before" is a
    priority, not a ban: an older file smaller than the room a newest one left may still go in. So a
    newest-turn document left out breaks the promise when it would fit the room left
    plus the room the older turns' documents sent took (those of history that may be
    dropped: a pinned message's files leave only with it, docs/history.md#the-ready-to-send-context,
    and it is never dropped while it fits the hard room, docs/context.md#the-rooms)."""
    u = newest_user(f.read.history)
    if u is None or not u.file_ids or not f.present(u):
        return []
    files = f.read.case.files
    sent = _sent_file_ids(f)
    left = [fid for fid in u.file_ids if includable(f, files[fid]) and fid not in sent]
    docs = [fid for fid in left if files[fid].category not in ("image", "audio")]
    if not docs:
        return []
    anchored = {fid for m in f.pinned for fid in m.file_ids} | set(u.file_ids)
    older = sorted(fid for fid in sent - anchored if files[fid].category not in ("image", "audio"))
    freed = sum(answer_tokens(f.answer, files[fid].text or "") for fid in older)
    room = (f.limits.budget if f.answer["filtered"] else f.limits.hard) - f.recount
    room -= format_slack(f) + _withheld_after_fill(f)
    beside = _documents_of(f, u.file_ids)
    costs = {fid: document_upper_cost(f, files[fid], beside) for fid in docs}
    fitting = [fid for fid in docs if costs[fid] <= room + freed]
    if not fitting:
        return []
    costs = {fid: costs[fid] for fid in fitting}
    if older:
        return [
            f"older files {older[:4]} sent while the newest turn's {fitting} (at most "
            f"{costs} tokens) are not: they fit the {room} tokens left and the "
            f"{freed} or more the older ones took"
        ]
    return [f"the newest turn's {fitting} (at most {costs} tokens) left out with {room} left"]


NEWLY_LEFT = "is left out; the model will continue without it"  # `binding.warning`


def _withheld_after_fill(f: Facts) -> int:
    """Room the binding rule freed after the fill: the reasoning tokens of the blocks it
    newly left out this read (the fill had counted them; it does not fill again: a known
    cost of bound reasoning, docs/harness.md "The binding oracle"). An upper bound: the
    payload of every row the answer holds whose reasoning it does not send."""
    dropped = f.answer.get("reasoning_dropped") or {}
    if not dropped.get("prefix_changed"):
        return 0
    if not any(NEWLY_LEFT in w for w in f.answer["warnings"]):
        return 0  # none newly left out: the watermark's were left out before the fill
    rows = {m.seq: m for m in f.visible if m.native is not None}
    return sum(
        answer_tokens(f.answer, json.dumps(rows[seq].native.payload))
        for seq, w in f.walked.items()
        if w.left and seq in rows
    )
