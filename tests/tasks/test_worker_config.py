"""Celery configuration, beat schedule and worker limits derived from settings."""

from __future__ import annotations

import pytest

from contextq.settings import Settings
from worker import names
from worker.config import celery_config
from worker.schedule import beat_schedule
from worker.signals import address_space_limit_bytes


def _settings(**kw: object) -> Settings:
    return Settings(REDIS_URL="redis://127.0.0.1:1/0", **kw)  # type: ignore[arg-type]


def test_reliability_settings() -> None:
    conf = celery_config(_settings())
    assert conf["task_acks_late"] and conf["task_reject_on_worker_lost"]
    assert conf["worker_prefetch_multiplier"] == 1
    assert conf["accept_content"] == ["json"] and conf["task_serializer"] == "json"
    assert conf["task_create_missing_queues"] is False
    assert {q.name for q in conf["task_queues"]} == {"files", "history"}
    assert conf["broker_transport_options"]["visibility_timeout"] > conf["task_time_limit"]
    assert conf["task_soft_time_limit"] < conf["task_time_limit"]
    assert conf["worker_max_memory_per_child"] == 2048 * 1024
    assert conf["worker_cancel_long_running_tasks_on_connection_loss"] is True


def test_visibility_timeout_setting_and_restore_period() -> None:
    conf = celery_config(_settings(BROKER_VISIBILITY_TIMEOUT_S=2))
    transport = conf["broker_transport_options"]
    assert transport["visibility_timeout"] == 2
    assert transport["unacked_restore_interval"] == 1
    assert transport["unacked_restore_throttle"] == 1


def test_no_broker_url_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="REDIS_URL"):
        celery_config(Settings(REDIS_URL=None))


def test_beat_schedule_has_the_sweep_with_expires() -> None:
    sched = beat_schedule(_settings(RECOVERY_SWEEP_INTERVAL_S=7))
    entry = sched["recover-files"]
    assert entry["task"] == names.RECOVER_FILES and entry["schedule"] == 7
    assert entry["options"]["queue"] == "files" and 0 < entry["options"]["expires"] <= 7


def test_beat_schedule_has_the_compaction_sweep_with_expires() -> None:
    sched = beat_schedule(_settings(COMPACTION_SWEEP_INTERVAL_S=11))
    assert set(sched) == {
        "recover-files",
        "embed-missing",
        "sweep-blobs",
        "sweep-compactions",
        "sweep-events",
    }
    entry = sched["sweep-compactions"]
    assert entry["task"] == names.SWEEP_COMPACTIONS and entry["schedule"] == 11
    assert entry["options"]["queue"] == "history" and 0 < entry["options"]["expires"] <= 11


def test_beat_schedule_has_the_vectors_backfill() -> None:
    entry = beat_schedule(_settings(RECOVERY_SWEEP_INTERVAL_S=7))["embed-missing"]
    assert entry["task"] == names.EMBED_MISSING and entry["schedule"] == 7
    assert entry["options"]["queue"] == "files" and 0 < entry["options"]["expires"] <= 7


def test_beat_schedule_has_the_storage_sweep() -> None:
    entry = beat_schedule(_settings(BLOB_SWEEP_INTERVAL_S=90))["sweep-blobs"]
    assert entry["task"] == names.SWEEP_BLOBS and entry["schedule"] == 90
    assert entry["options"]["queue"] == "files" and 0 < entry["options"]["expires"] <= 90


def test_beat_schedule_has_the_events_sweep_with_expires() -> None:
    entry = beat_schedule(_settings(EVENTS_SWEEP_INTERVAL_S=13))["sweep-events"]
    assert entry["task"] == names.SWEEP_EVENTS and entry["schedule"] == 13
    assert entry["options"]["queue"] == "history" and 0 < entry["options"]["expires"] <= 13


def test_address_space_limit() -> None:
    assert address_space_limit_bytes(2048) == 8 * 1024**3
    assert address_space_limit_bytes(4096) == 16 * 1024**3


def test_production_refuses_a_visibility_timeout_under_the_time_limit() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="BROKER_VISIBILITY_TIMEOUT_S"):
        Settings(ENVIRONMENT="production", BROKER_VISIBILITY_TIMEOUT_S=60, TASK_TIME_LIMIT_S=300)
    ok = Settings(ENVIRONMENT="production")
    assert ok.broker_visibility_timeout_s == ok.TASK_TIME_LIMIT_S + 60
