"""What the private-data checkpoint costs a message append
(docs/workspaces.md#private-data-conversation-and-memory-checkpoints), in-process.

    .venv/bin/python bench/memory_checkpoint.py [--rounds 300] [--decisions 0,200,2000]

On a temporary DATA_DIR with SQLite, one conversation whose memory holds `decisions`
decisions (the trail is never compressed, so it is what makes a checkpoint large) takes
single-message appends through the `append_messages` use case, each in its own
transaction as the API runs it. In alternating blocks of 50 (same run, same database) with the
checkpoint rewritten after the commit (by the background writer: off the request path,
but in the same process, so it competes for the interpreter), and with it dropped before
the commit (the baseline); appends back to back (the writer competes with the next
append for the interpreter and the database) and 20 ms apart (an agent's turns are
further apart than that). Prints p50/p99 of both, the ratio, the checkpoint's size, and
what one rewrite costs the writer (`refresh_checkpoint` alone).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


BLOCK = 50


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _setup(decisions: int) -> tuple[str, str]:
    from contextq.settings import get_settings
    from service.history import add_decision, create_conversation
    from store.db import session_scope
    from store.keys import create_key, owner_for_key

    settings = get_settings()
    with session_scope() as session:
        owner_id = owner_for_key(session, create_key(session, owner_name="bench"))
        assert owner_id is not None
        cid = create_conversation(
            session=session, settings=settings, owner_id=owner_id, data={"title": "bench"}
        ).id
    for i in range(decisions):
        with session_scope() as session:
            add_decision(
                session=session,
                settings=settings,
                owner_id=owner_id,
                conversation_id=cid,
                decision=f"Decision {i}: keep module m{i} synchronous for now",
                rationale="less churn while the importer is ported",
                impact="low",
            )
    return owner_id, cid


def _append(owner_id: str, cid: str, i: int, *, checkpoint: bool) -> float:
    from contextq.settings import get_settings
    from service.history import append_messages
    from service.history.checkpoint import _PENDING
    from store.db import session_scope

    message = {"role": "user", "content": f"step {i}: look at importer/stage_{i}.py"}
    started = time.perf_counter()
    with session_scope() as session:
        append_messages(
            session=session,
            settings=get_settings(),
            owner_id=owner_id,
            conversation_id=cid,
            messages=[message],
            batch=False,
        )
        if not checkpoint:
            session.info.pop(_PENDING, None)
    return (time.perf_counter() - started) * 1000


def run(rounds: int, decisions: int, gap_s: float) -> None:
    from contextq.settings import get_settings
    from service.history.checkpoint import checkpoint_path, flush_checkpoints, refresh_checkpoint

    settings = get_settings()
    owner_id, cid = _setup(decisions)
    times: dict[bool, list[float]] = {True: [], False: []}
    for block in range(2 * max(1, rounds // BLOCK)):
        with_checkpoint = block % 2 == 1
        for i in range(BLOCK):
            n = block * BLOCK + i
            times[with_checkpoint].append(_append(owner_id, cid, n, checkpoint=with_checkpoint))
            time.sleep(gap_s)
        assert flush_checkpoints(30)  # the next block starts with the writer idle
    size = checkpoint_path(settings, owner_id=owner_id, conversation_id=cid).stat().st_size
    rewrites = []
    for _ in range(max(10, rounds // 10)):
        started = time.perf_counter()
        refresh_checkpoint(settings=settings, owner_id=owner_id, conversation_id=cid)
        rewrites.append((time.perf_counter() - started) * 1000)
    base, ours = times[False], times[True]
    print(
        f"gap {gap_s * 1000:3.0f} ms  decisions {decisions:>5}  checkpoint {size / 1024:6.1f} KiB  "
        f"append p50 {statistics.median(base):6.2f} → {statistics.median(ours):6.2f} ms "
        f"(x{statistics.median(ours) / statistics.median(base):.2f}), "
        f"p99 {_pct(base, 99):6.2f} → {_pct(ours, 99):6.2f} ms;  "
        f"one rewrite p50 {statistics.median(rewrites):6.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--decisions", default="0,200,2000")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="contextq-bench-checkpoint-"))
    os.environ.update({"DATA_DIR": str(data_dir), "REDIS_URL": "redis://127.0.0.1:9/0"})
    os.environ.pop("DATABASE_URL", None)
    try:
        from store.db import migrate

        migrate()
        print("single-message appends, without → with the checkpoint (alternating, same run)")
        for gap_s in (0.0, 0.02):  # back to back (worst case), then 20 ms apart
            for decisions in (int(d) for d in args.decisions.split(",")):
                run(args.rounds, decisions, gap_s)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
