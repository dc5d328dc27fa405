"""The promises about attached files (SPEC §6 "How files are given", "Files that are
not there", "Budget"): nothing dropped silently, the newest turn's files first."""

from __future__ import annotations

from contextq.assembly import FileView
from contextq.catalog import resolve_model
from tests.engine.assembly.harness.facts import Facts, newest_user
from tests.engine.assembly.harness.oracle import answer_tokens


def _sent_file_ids(f: Facts) -> set[str]:
    by_name = {v.filename: fid for fid, v in f.read.case.files.items() if v.filename}
    out = {by_name[d["title"]] for d in f.sent.documents if d.get("title") in by_name}
    for label, after in f.sent.labels:
        name = label.split(": ", 1)[1] if ": " in label else ""
        if after in ("image_url", "image", "input_audio") and name in by_name:
            out.add(by_name[name])
    return out


def includable(f: Facts, view: FileView) -> bool:
    """Whether the model and format can take the file at all (else it is a note)."""
    if view.status != "ready":
        return False
    if view.category == "image":
        model = resolve_model(f.answer["model"] or None, f.read.settings)
        media_ok = f.answer["format"] != "anthropic" or view.media_type in (
            "image/png",
            "image/jpeg",
            "image/gif",
            "image/webp",
        )
        return model.takes("image") and bool(view.data_b64) and media_ok
    if view.category == "audio":
        model = resolve_model(f.answer["model"] or None, f.read.settings)
        return f.answer["format"] == "openai" and model.takes("audio") and bool(view.data_b64)
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


def newest_files_first(f: Facts) -> list[str]:
    """The newest turn's files go in before any older turn's, as many as fit, never
    all-or-nothing."""
    u = newest_user(f.read.history)
    if u is None or not u.file_ids or not f.present(u):
        return []
    files = f.read.case.files
    sent = _sent_file_ids(f)
    left = [fid for fid in u.file_ids if includable(f, files[fid]) and fid not in sent]
    if not left:
        return []
    older = sorted(sent - set(u.file_ids))
    problems = []
    if older:
        problems.append(f"older files {older[:4]} sent while the newest turn's {left} are not")
    # the room the engine saw by its own count (higher than the recount while it adds
    # framing: SPEC §3 before its clarification)
    used = max(f.recount, f.answer["token_count"])
    room = (f.limits.budget if f.answer["filtered"] else f.limits.hard) - used
    docs = [fid for fid in left if files[fid].category not in ("image", "audio")]
    if len(left) == len([x for x in u.file_ids if includable(f, files[x])]) and docs:
        smallest = min(answer_tokens(f.answer, files[x].text or "") for x in docs) + 60
        if smallest <= room:
            problems.append(
                f"all {len(left)} of the newest turn's files left out with {room} tokens of "
                f"room left (the smallest needs about {smallest})"
            )
    return problems
