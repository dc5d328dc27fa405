"""`contextq keys list|revoke` with the real CLI, and revocation reaching two real API
processes (uvicorn subprocesses with their own auth caches) through the real broker."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import httpx
import pytest

from store.tables import ApiKey
from tests.support.api import ApiServer
from tests.support.db import all_rows
from tests.support.procs import executable, wait_until

pytestmark = pytest.mark.integration


def cli(stack: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [executable("contextq"), "keys", *args],
        env=stack.subprocess_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_revoked_key_answers_401_within_a_second_on_every_api_process(
    stack: Any, owner: Any, make_owner: Any, tmp_path: Any
) -> None:
    other = make_owner("bob")
    servers = [ApiServer(stack, log_dir=tmp_path / "logs").start() for _ in range(2)]
    try:
        for server in servers:  # every process has both keys in its auth cache
            for key in (owner.key, other.key):
                for _ in range(2):
                    resp = httpx.get(
                        f"{server.base_url}/v1/files",
                        headers={"Authorization": f"Bearer {key}"},
                        timeout=10,
                    )
                    assert resp.status_code == 200, resp.text
        done = cli(stack, "revoke", owner.key[:10])
        revoked_at = time.monotonic()
        assert done.returncode == 0, done.stderr
        assert "every API process refuses it within a second" in done.stderr

        def refused_everywhere() -> bool:
            return all(
                httpx.get(
                    f"{s.base_url}/v1/files",
                    headers={"Authorization": f"Bearer {owner.key}"},
                    timeout=10,
                ).status_code
                == 401
                for s in servers
            )

        wait_until(refused_everywhere, timeout=5, interval=0.02, what="401 on both processes")
        assert time.monotonic() - revoked_at < 1.0
        for server in servers:  # the other owner's key still works
            resp = httpx.get(
                f"{server.base_url}/v1/files",
                headers={"Authorization": f"Bearer {other.key}"},
                timeout=10,
            )
            assert resp.status_code == 200
    finally:
        for server in servers:
            server.stop()


def test_keys_list_shows_prefix_owner_created_and_last_use(
    stack: Any, owner: Any, make_owner: Any, client: Any
) -> None:
    idle = make_owner("carol")
    listed = cli(stack, "list")
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.strip().splitlines()
    assert header.split() == ["PREFIX", "OWNER", "CREATED", "LAST", "USED"]
    mine = next(line for line in lines if line.startswith(owner.key[:10]))
    assert " alice " in mine and mine.rstrip().endswith("never")
    assert all(owner.key[10:] not in line for line in lines)  # never more than the prefix

    for _ in range(5):
        assert client.get("/v1/files").status_code == 200

    def used_once() -> list[ApiKey] | None:
        rows = [k for k in all_rows(ApiKey) if k.prefix == owner.key[:10]]
        return rows if rows and rows[0].last_used_at is not None else None

    (row,) = wait_until(used_once, timeout=10, what="last_used_at noted")
    first_use = row.last_used_at
    for _ in range(5):  # within the minute: no further write
        assert client.get("/v1/files").status_code == 200
    time.sleep(0.3)
    assert [k.last_used_at for k in all_rows(ApiKey) if k.id == row.id] == [first_use]

    listed = cli(stack, "list").stdout
    mine = next(line for line in listed.splitlines() if line.startswith(owner.key[:10]))
    assert not mine.rstrip().endswith("never")
    carol = next(line for line in listed.splitlines() if line.startswith(idle.key[:10]))
    assert carol.rstrip().endswith("never")


def test_keys_revoke_refuses_unknown_short_and_revoked_prefixes(stack: Any, owner: Any) -> None:
    short = cli(stack, "revoke", "cq_")
    assert short.returncode == 1 and "at least 6 characters" in short.stderr
    unknown = cli(stack, "revoke", "cq_zzzzzzz")
    assert unknown.returncode == 1 and "no active key" in unknown.stderr
    assert cli(stack, "revoke", owner.key[:10]).returncode == 0
    again = cli(stack, "revoke", owner.key[:10])
    assert again.returncode == 1 and "no active key" in again.stderr
    listed = cli(stack, "list", "--revoked").stdout
    assert "REVOKED" in listed.splitlines()[0] and owner.key[:10] in listed
    assert owner.key[:10] not in cli(stack, "list").stdout
