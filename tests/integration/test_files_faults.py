"""Faults with real parts: SIGKILLed workers, lost enqueues, poison files, time limits.

Test-only hooks (refused in production): TEST_PROCESS_DELAY_S makes process_file
sleep after claiming a row; TEST_KILL_SENTINEL makes it SIGKILL its own process
for files that contain the sentinel.
"""

from __future__ import annotations

import pytest

from store.tables import File, FileStatus
from tests.support.api import ApiServer
from tests.support.db import all_rows, get_row
from tests.support.files import upload, wait_file_done
from tests.support.procs import free_port, wait_until

pytestmark = pytest.mark.integration

SENTINEL = "CONTEXTQ-TEST-KILL-7f3a"


def _wait_status(file_id: str, status: str, *, timeout: float = 30.0) -> File:
    def check() -> File | None:
        row = get_row(File, file_id)
        return row if row is not None and row.status == status else None

    return wait_until(check, timeout=timeout, what=f"file {file_id} to be {status}")


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="4")
def test_sigkill_pool_child_mid_task_file_still_ends_ready(
    stack, worker_factory, client, owner
) -> None:
    worker = worker_factory()
    body = upload(client, "slow.txt", b"survives a SIGKILL\n")
    row = _wait_status(body["id"], FileStatus.PROCESSING)
    assert row.attempts == 1
    killed = worker.kill_child()
    # the main process survives, replaces the child, and (reject_on_worker_lost) requeues
    # the message at once; the new child sees the claim's holder is dead and takes over
    done = wait_file_done(client, body["id"], timeout=60)
    assert done["status"] == "ready", done
    assert worker.alive() and killed not in worker.pool_pids()
    row = get_row(File, body["id"])
    assert row is not None and row.attempts == 2
    assert len(all_rows(File, owner_id=owner.owner_id)) == 1
    assert "survives a SIGKILL" in client.get(f"/v1/files/{body['id']}/content").text


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="4", BROKER_VISIBILITY_TIMEOUT_S="2")
def test_sigkill_whole_worker_then_restart_redelivers(stack, worker_factory, client, owner) -> None:
    worker = worker_factory()
    body = upload(client, "slow.txt", b"the whole worker died\n")
    _wait_status(body["id"], FileStatus.PROCESSING)
    worker.kill()  # main process and pool child: nobody requeues the message
    assert not worker.alive()
    # a new worker: the unacked message comes back after the (test-sized) visibility timeout
    worker_factory(stack.with_overrides(TEST_PROCESS_DELAY_S="0"))
    done = wait_file_done(client, body["id"], timeout=60)
    assert done["status"] == "ready", done
    row = get_row(File, body["id"])
    assert row is not None and row.attempts == 2
    assert len(all_rows(File, owner_id=owner.owner_id)) == 1


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="4", RECOVERY_SWEEP_INTERVAL_S="1")
def test_sigkill_whole_worker_recovered_by_sweep(
    stack, worker_factory, beat_factory, client, owner
) -> None:
    """No short visibility timeout: the sweep finds the `processing` row whose holder is
    dead and re-enqueues it."""
    worker = worker_factory()
    body = upload(client, "slow.txt", b"recovered by the sweep\n")
    _wait_status(body["id"], FileStatus.PROCESSING)
    worker.kill()
    fresh = stack.with_overrides(TEST_PROCESS_DELAY_S="0")
    worker_factory(fresh)
    beat_factory(fresh)
    done = wait_file_done(client, body["id"], timeout=60)
    assert done["status"] == "ready", done
    row = get_row(File, body["id"])
    assert row is not None and row.attempts == 2
    assert len(all_rows(File, owner_id=owner.owner_id)) == 1


@pytest.mark.stack_env(RECOVERY_SWEEP_INTERVAL_S="1", RECOVERY_UPLOADED_GRACE_S="1")
def test_row_whose_enqueue_never_happened_is_picked_up_by_the_sweep(
    stack, tmp_path, worker_factory, beat_factory, owner
) -> None:
    # an API whose broker is unreachable: the row commits, the enqueue fails (as if the
    # API died between commit and enqueue); the client still gets 202
    dead_broker = stack.with_overrides(REDIS_URL=f"redis://127.0.0.1:{free_port()}/0")
    with ApiServer(dead_broker, log_dir=tmp_path / "logs") as api, api.client(owner.key) as c:
        assert c.get("/healthz").status_code == 503
        body = upload(c, "orphan.txt", b"nobody enqueued me\n")
    assert body["status"] == "uploaded"
    row = get_row(File, body["id"])
    assert row is not None and (row.status, row.attempts) == (FileStatus.UPLOADED, 0)

    worker_factory()
    beat_factory()
    row = _wait_status(body["id"], FileStatus.READY, timeout=60)
    assert row.attempts == 1


@pytest.mark.stack_env(TEST_KILL_SENTINEL=SENTINEL, MAX_ATTEMPTS="3")
def test_poison_file_fails_after_max_attempts_and_worker_keeps_serving(
    stack, worker_factory, client
) -> None:
    worker = worker_factory()
    first_child = worker.pool_pids()
    poison = upload(client, "poison.txt", f"looks harmless {SENTINEL}\n".encode())
    done = wait_file_done(client, poison["id"], timeout=120)
    assert done["status"] == "failed", done
    assert "crashed or timed out the worker 3 times" in done["error"]
    row = get_row(File, poison["id"])
    assert row is not None and row.attempts == 3
    assert client.get(f"/v1/files/{poison['id']}/content").status_code == 409
    # the same worker (new children) keeps serving other files
    assert worker.alive() and worker.pool_pids() != first_child
    ok = wait_file_done(client, upload(client, "fine.txt", b"a normal file\n")["id"])
    assert ok["status"] == "ready"


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="5", TASK_SOFT_TIME_LIMIT_S="1", TASK_TIME_LIMIT_S="4")
def test_soft_time_limit_ends_failed_saying_so(stack, worker_factory, client) -> None:
    worker = worker_factory()
    body = upload(client, "slow.txt", b"too slow\n")
    done = wait_file_done(client, body["id"], timeout=60)
    assert done["status"] == "failed"
    assert "longer than the time limit (1 s" in done["error"]
    assert worker.alive()
    row = get_row(File, body["id"])
    assert row is not None and row.attempts == 1


def test_pool_children_run_under_an_address_space_limit(stack, worker) -> None:
    import psutil

    from worker.signals import address_space_limit_bytes

    inherited, _ = psutil.Process().rlimit(psutil.RLIMIT_AS)
    expected = address_space_limit_bytes(2048)
    if inherited != psutil.RLIM_INFINITY:
        expected = min(expected, inherited)

    def soft_limits() -> list[int]:  # a child applies it in worker_process_init, just after
        try:  # the fork: under load the worker can report ready a moment before that
            return [psutil.Process(p).rlimit(psutil.RLIMIT_AS)[0] for p in worker.pool_pids()]
        except psutil.NoSuchProcess:
            return []

    wait_until(
        lambda: soft_limits() and set(soft_limits()) == {expected},
        timeout=20,
        what="every pool child to apply its address-space limit",
    )
    children = worker.pool_pids()
    assert children
    for pid in children:
        soft, _hard = psutil.Process(pid).rlimit(psutil.RLIMIT_AS)
        assert soft == expected
    soft, _ = psutil.Process(worker.pid).rlimit(psutil.RLIMIT_AS)
    assert soft == inherited  # only the pool children are capped


@pytest.mark.stack_env(TEST_PROCESS_DELAY_S="4", BROKER_VISIBILITY_TIMEOUT_S="1")
def test_duplicate_delivery_to_a_second_worker_writes_once(
    stack, worker_factory, client, owner
) -> None:
    """A visibility timeout shorter than the task (misconfigured on purpose) hands the same
    message to a second worker while the first still runs: the second sees a live claim
    and backs off; one result, one attempt."""
    first = worker_factory()
    body = upload(client, "slow.txt", b"delivered twice\n")
    _wait_status(body["id"], FileStatus.PROCESSING)
    second = worker_factory()
    wait_until(
        lambda: "process_file" in second.log(),
        timeout=30,
        what="the second worker to receive the redelivered message",
    )
    done = wait_file_done(client, body["id"], timeout=60)
    assert done["status"] == "ready", done
    row = get_row(File, body["id"])
    assert row is not None and row.attempts == 1
    assert len(all_rows(File, owner_id=owner.owner_id)) == 1
    assert first.alive() and second.alive()
