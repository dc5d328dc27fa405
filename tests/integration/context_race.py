"""Concurrent context reads through the real API (issue 27, "One answer under
concurrency"): builders of a conversation just past its budget, 8 reads fired at once
on warm connections (uvicorn with several worker processes), and what each answered
and what was stored. `test_context_concurrent.py` asserts on it; run as a script it
measures how often answers disagree over many rounds:

    .venv/bin/python -m tests.integration.context_race --rounds 30 [--postgres]
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
import orjson
import psutil
from sqlalchemy import select

from store.context_tables import ContextCutPoint
from store.db import read_session
from tests.support.api import api_client

READS = 8
MODEL = "gpt-4o"
WINDOW = 16_000  # MAX_CONTEXT_TOKENS: a gpt-4o history passes its budget in ~25 turns
FIRST_TURNS = 30  # imported at once: the first read moves the cut point and the line
VOLATILE = ("duration_ms", "filter_duration_ms")
SPREAD_S = 0.3  # appends during a burst: the reads leave over this long


def turn(n: int) -> list[dict[str, Any]]:
    """An agent turn: a user message, a tool call and its ~500-token result, an answer."""
    words = " ".join(f"row{n}-{k} status=ok latency={k * 7 % 300}ms" for k in range(60))
    call = {"id": f"c{n}", "type": "function", "function": {"name": "health", "arguments": "{}"}}
    return [
        {"role": "user", "content": f"U{n} check the service health"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"health report {n}: {words}"},
        {"role": "assistant", "content": f"A{n} all {n} checks passed."},
    ]


def new_conversation(client: httpx.Client, turns: range = range(0)) -> str:
    cid = str(client.post("/v1/conversations", json={"model": MODEL}).json()["id"])
    if turns:
        append(client, cid, turns)
    return cid


def append(client: httpx.Client, cid: str, turns: range) -> None:
    messages = [m for n in turns for m in turn(n)]
    r = client.post(f"/v1/conversations/{cid}/messages", json={"messages": messages})
    assert r.status_code == 201, r.text


@dataclass(frozen=True)
class Answer:
    """What one read answered: its status, the first message it kept (the cut point),
    the tool results it cleared (the clearing line), and its bytes (timings aside)."""

    status: int
    first_kept: str | None
    cleared: tuple[str, ...]
    body: bytes
    seen: int = 0  # the history's length it answered for (`original_message_count`)

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.status, self.first_kept, self.cleared, self.body)


@dataclass(frozen=True)
class Stored:
    seq: int | None
    clear_seq: int | None
    version: int | None = None  # the number of writes of the state so far


def message_ids(client: httpx.Client, cid: str) -> list[tuple[str, int]]:
    """The conversation's (id, seq) in seq order."""
    out: list[tuple[str, int]] = []
    cursor = None
    while True:
        page = client.get(
            f"/v1/conversations/{cid}/messages", params={"limit": 1000, "cursor": cursor}
        ).json()
        out += [(m["id"], m["seq"]) for m in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            return out


def summarise(status: int, answer: dict[str, Any], ids: list[tuple[str, int]]) -> Answer:
    if status != 200:
        return Answer(status, None, (), orjson.dumps(answer))
    removed = set(answer["removed_message_ids"])
    kept = [i for i, _ in ids if i not in removed]
    body = orjson.dumps({k: v for k, v in answer.items() if k not in VOLATILE})
    cleared = tuple(answer["cleared_tool_result_ids"])
    seen = int(answer["original_message_count"])
    return Answer(status, kept[0] if kept else None, cleared, body, seen)


def read_once(client: httpx.Client, cid: str) -> dict[str, Any]:
    r = client.get(f"/v1/conversations/{cid}/context", params={"model": MODEL})
    assert r.status_code == 200, r.text
    return dict(r.json())


def serving_processes(server_pid: int, port: int) -> int:
    """How many of the API's processes hold an open client connection on `port`."""
    children = psutil.Process(server_pid).children(recursive=True)
    return sum(
        any(
            c.status == psutil.CONN_ESTABLISHED and c.laddr.port == port
            for c in p.net_connections()
        )
        for p in children
    )


@dataclass(frozen=True)
class Target:
    """The API under test: its URL, a key, and its supervisor's pid (None: not known)."""

    base_url: str
    key: str
    pid: int | None = None


@dataclass
class Round:
    """One burst on a conversation: the answers, the message seqs by id, how many API
    processes held its connections (0: not known), and the state stored after it."""

    cid: str
    answers: list[Answer]
    seqs: dict[str, int]
    processes: int
    stored: Stored = Stored(None, None)

    @property
    def agree(self) -> bool:
        return len({a.key for a in self.answers}) == 1 and self.answers[0].status == 200

    @property
    def variants(self) -> int:
        return len({a.key for a in self.answers})

    def newest(self) -> Round:
        """The answers for the longest history seen (appends during a burst)."""
        seen = max(a.seen for a in self.answers)
        newest = [a for a in self.answers if a.seen == seen]
        return Round(self.cid, newest, self.seqs, self.processes, self.stored)

    @property
    def matches_stored(self) -> bool:
        """The stored state is the one every answer shows: the cut point is the first
        kept message, the results below the line (and only they) are cleared."""
        for a in self.answers:
            if a.status != 200 or a.first_kept is None:
                return False
            if self.stored.seq is not None and self.seqs[a.first_kept] != self.stored.seq:
                return False
            line = self.stored.clear_seq
            if any(line is None or self.seqs[i] >= line for i in a.cleared):
                return False
        return True


def fire(
    api: Target,
    cid: str,
    reads: int = READS,
    during: Callable[[], object] | None = None,
    spread_s: float = 0.0,
) -> Round:
    """`reads` context reads sent at once, each on its own warm connection (so uvicorn's
    worker processes share them out), summarised in the order they were sent, and the
    state stored after them. `during` runs beside them, released with them; with
    `spread_s`, the i-th read leaves i/reads of it later."""
    clients = [api_client(api.base_url, api.key, timeout=60) for _ in range(reads)]
    try:
        for c in clients:  # connect first: the reads then leave together
            c.get("/healthz")
        port = httpx.URL(api.base_url).port or 80
        processes = serving_processes(api.pid, port) if api.pid is not None else 0
        gate = threading.Barrier(reads + (during is not None))

        def one(i: int) -> httpx.Response:
            gate.wait()
            time.sleep(spread_s * i / reads)
            return clients[i].get(f"/v1/conversations/{cid}/context", params={"model": MODEL})

        def beside() -> object:
            gate.wait()
            return during() if during is not None else None

        with ThreadPoolExecutor(reads + 1) as pool:
            side = pool.submit(beside) if during is not None else None
            responses = list(pool.map(one, range(reads)))
            if side is not None:
                side.result()
        ids = message_ids(clients[0], cid)
        answers = [summarise(r.status_code, r.json(), ids) for r in responses]
        return Round(cid, answers, dict(ids), processes, stored(cid))
    finally:
        for c in clients:
            c.close()


def stored(cid: str) -> Stored:
    with read_session() as session:
        row = session.execute(
            select(ContextCutPoint.seq, ContextCutPoint.clear_seq, ContextCutPoint.version).where(
                ContextCutPoint.conversation_id == cid, ContextCutPoint.model == MODEL
            )
        ).first()
    return Stored(*row) if row is not None else Stored(None, None)


def moved(before: dict[str, Any] | None, after: dict[str, Any]) -> bool:
    """Whether `after` cut or cleared more than `before` (a move of the carried state)."""
    if before is None:
        return bool(after["removed_message_ids"] or after["cleared_tool_result_ids"])
    return set(after["removed_message_ids"]) != set(before["removed_message_ids"]) or set(
        after["cleared_tool_result_ids"]
    ) != set(before["cleared_tool_result_ids"])


def first_read_round(client: httpx.Client, api: Target) -> Round:
    """A conversation imported past its budget, never read: 8 first reads at once."""
    return fire(api, new_conversation(client, range(1, FIRST_TURNS + 1)))


class Lockstep:
    """Twin conversations with the same turns: the probe is read after every turn, the
    target too until the probe's read moved the carried state, when the target gets a
    burst of reads instead (its next read would move the state too)."""

    def __init__(self, client: httpx.Client, api: Target, start: int = 20) -> None:
        self.client, self.api = client, api
        self.probe = new_conversation(client, range(1, start + 1))
        self.target = new_conversation(client, range(1, start + 1))
        self.n = start
        self.last = read_once(client, self.probe)
        read_once(client, self.target)

    def next_round(self, max_turns: int = 20) -> Round:
        for _ in range(max_turns):
            self.n += 1
            for cid in (self.probe, self.target):
                append(self.client, cid, range(self.n, self.n + 1))
            answer = read_once(self.client, self.probe)
            move, self.last = moved(self.last, answer), answer
            if move:
                return fire(self.api, self.target)
            read_once(self.client, self.target)
        raise AssertionError(f"no move of the carried state in {max_turns} turns")


def appends_round(client: httpx.Client, api: Target, start: int = 20) -> Round:
    """Fresh twins advanced until the probe's next turn moves the carried state; then the
    target's burst of reads runs beside two appends (that turn and the next), so some
    reads see an older history than others."""
    step = Lockstep(client, api, start)
    for _ in range(20):
        n = step.n + 1
        append(client, step.probe, range(n, n + 1))
        answer = read_once(client, step.probe)
        if moved(step.last, answer):
            during = partial(_two_appends, api, step.target, n)
            return fire(api, step.target, during=during, spread_s=SPREAD_S)
        step.last, step.n = answer, n
        append(client, step.target, range(n, n + 1))
        read_once(client, step.target)
    raise AssertionError("no move of the carried state in 20 turns")


def _two_appends(api: Target, cid: str, n: int) -> None:
    with api_client(api.base_url, api.key, timeout=60) as writer:
        time.sleep(SPREAD_S / 4)
        append(writer, cid, range(n, n + 1))
        time.sleep(SPREAD_S / 4)
        append(writer, cid, range(n + 1, n + 2))


def _main() -> None:  # pragma: no cover - a measurement, run by hand
    import argparse
    import tempfile
    from pathlib import Path

    from tests.support import postgres as pg
    from tests.support.api import ApiServer
    from tests.support.db import create_owner, migrate
    from tests.support.stack import StackEnv, reset_process_state
    from tests.support.valkey import db_url, start_valkey

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="contextq-race-"))
    valkey = start_valkey(root / "valkey")
    server = pg.PostgresServer().start() if args.postgres else None
    api = None
    try:
        url = server.create_database() if server is not None else None
        env = StackEnv(root / "data", db_url(valkey), url, {"MAX_CONTEXT_TOKENS": str(WINDOW)})
        env.activate()
        migrate()
        owner = create_owner("race")
        api = ApiServer(env, log_dir=root / "logs", workers=args.workers).start()
        target = Target(api.base_url, owner.key, api.pid)
        with api.client(owner.key, timeout=60) as client:
            firsts = [first_read_round(client, target) for _ in range(args.rounds)]
            _report("first read", firsts)
            writes = sorted({r.stored.version for r in firsts}, key=str)
            print(f"  writes of the state per burst (its version): {writes}")
            lockstep = Lockstep(client, target)
            _report("a carried state moves", [lockstep.next_round() for _ in range(args.rounds)])
            rounds = [appends_round(client, target) for _ in range(args.rounds)]
            seen = [sorted({a.seen for a in r.answers}) for r in rounds]
            print(f"appends during the burst: histories seen per burst {seen}")
            _report("  their reads of the newest history", [r.newest() for r in rounds])
        reset_process_state()
    finally:
        if api is not None:
            api.stop()
        if server is not None:
            server.stop()
        valkey.stop()


def _report(name: str, rounds: list[Round]) -> None:  # pragma: no cover
    statuses: dict[int, int] = {}
    for r in rounds:
        for a in r.answers:
            statuses[a.status] = statuses.get(a.status, 0) + 1
    disagree = [r for r in rounds if not r.agree]
    spread = sorted(r.processes for r in rounds)
    reads = sum(len(r.answers) for r in rounds)
    print(f"{name}: {len(rounds)} rounds, {reads} reads; statuses {statuses}")
    print(f"  API processes holding a burst's connections: {spread[0]}..{spread[-1]}")
    mismatch = [r for r in rounds if not r.matches_stored]
    print(f"  rounds whose answers disagree: {len(disagree)}; stored state not the answered")
    print(f"  one: {len(mismatch)}")
    for r in (disagree + mismatch)[:5]:
        firsts = sorted(
            {(r.seqs.get(a.first_kept or ""), len(a.cleared)) for a in r.answers}, key=str
        )
        print(f"    {r.variants} variants; (first kept seq, cleared): {firsts}; {r.stored}")
    r = rounds[-1]
    a = r.answers[0]
    print(f"  last round: first kept seq {r.seqs.get(a.first_kept or '')}, {len(a.cleared)}")
    print(f"  cleared (seqs {[r.seqs[i] for i in a.cleared][-3:]}...), stored {r.stored}")


if __name__ == "__main__":  # pragma: no cover
    _main()
