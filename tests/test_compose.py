"""docker-compose.yml and Dockerfile, checked without a Docker engine.

Every `contextq …` command line in the compose file (service commands and
healthchecks) is parsed by the real CLI: `--help` appended, so an unknown
command or option fails here rather than in a container.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from cli.main import app

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = ("api", "worker", "beat", "flower")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


def _argv(command: Any) -> list[str]:
    assert isinstance(command, list), f"use the exec form (a list), not a shell string: {command!r}"
    return [str(c) for c in command]


def _check_cli(argv: list[str]) -> None:
    assert argv[0] == "contextq", argv
    result = CliRunner().invoke(app, [*argv[1:], "--help"])
    assert result.exit_code == 0, f"`{' '.join(argv)}` is not a valid CLI call:\n{result.output}"
    assert "Usage" in result.output


def test_every_part_is_a_service(services: dict[str, Any]) -> None:
    assert {"redis", "postgres", "migrate", *APP_SERVICES} <= set(services)


@pytest.mark.parametrize("name", [*APP_SERVICES, "migrate"])
def test_service_command_exists_in_cli(services: dict[str, Any], name: str) -> None:
    service = services[name]
    assert service.get("build") == ".", f"{name} must be built from the one Dockerfile"
    assert service.get("image") == "contextq:latest"
    _check_cli(_argv(service["command"]))


@pytest.mark.parametrize("name", ["redis", "postgres", *APP_SERVICES])
def test_long_running_services_restart_unless_stopped(services: dict[str, Any], name: str) -> None:
    assert services[name].get("restart") == "unless-stopped", name


def test_app_services_log_from_settings(services: dict[str, Any]) -> None:
    for name in (*APP_SERVICES, "migrate"):
        env = services[name]["environment"]
        assert env["LOG_LEVEL"] == "${LOG_LEVEL:-INFO}", name
        assert env["LOG_FORMAT"] == "${LOG_FORMAT:-json}", name


def test_one_image_different_commands(services: dict[str, Any]) -> None:
    commands = {services[n]["command"][1] for n in (*APP_SERVICES, "migrate")}
    assert commands == {"api", "worker", "beat", "flower", "migrate"}


@pytest.mark.parametrize("name", ["redis", "postgres", *APP_SERVICES])
def test_long_running_services_have_healthchecks(services: dict[str, Any], name: str) -> None:
    check = services[name].get("healthcheck")
    assert check and check.get("test"), f"{name} has no healthcheck"
    test = _argv(check["test"])
    assert test[0] in ("CMD", "CMD-SHELL")
    if test[0] == "CMD" and test[1] == "contextq":
        _check_cli(test[1:])


def test_app_services_wait_for_healthy_dependencies(services: dict[str, Any]) -> None:
    for name in APP_SERVICES:
        deps = services[name]["depends_on"]
        assert isinstance(deps, dict), f"{name}: depends_on needs conditions"
        assert deps["redis"]["condition"] == "service_healthy", name
        for dep, spec in deps.items():
            assert spec["condition"] in ("service_healthy", "service_completed_successfully"), (
                name,
                dep,
            )
            assert dep in services
            if spec["condition"] == "service_healthy":
                assert services[dep].get("healthcheck"), f"{name} waits on {dep} without a check"


def test_migrations_run_before_api_worker_beat(services: dict[str, Any]) -> None:
    migrate = services["migrate"]
    assert _argv(migrate["command"]) == ["contextq", "migrate"]
    assert str(migrate.get("restart")) == "no"
    assert migrate["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("api", "worker", "beat"):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully", name
        assert deps["postgres"]["condition"] == "service_healthy", name


def test_redis_password_aof_noeviction(services: dict[str, Any]) -> None:
    redis = services["redis"]
    assert str(redis["image"]).startswith("redis:7")
    argv = _argv(redis["command"])
    assert argv[0] == "redis-server"
    opts = dict(zip(argv[1::2], argv[2::2], strict=True))
    assert opts["--requirepass"].startswith("${REDIS_PASSWORD:?")
    assert opts["--appendonly"] == "yes"
    assert opts["--maxmemory-policy"] == "noeviction"
    assert not redis.get("ports"), "the broker must not be published"


def test_postgres_16_and_urls(services: dict[str, Any]) -> None:
    assert str(services["postgres"]["image"]) == "postgres:16"
    for name in (*APP_SERVICES, "migrate"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgresql+psycopg://"), name
        assert "@postgres:5432/" in env["DATABASE_URL"]
        assert re.fullmatch(
            r"redis://:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379/\d+", env["REDIS_URL"]
        ), name
        assert env["ENVIRONMENT"] == "production"


def test_shared_blobs_volume_at_data_dir(compose: dict[str, Any], services: dict[str, Any]) -> None:
    assert "blobs" in compose["volumes"]
    for name in (*APP_SERVICES, "migrate"):
        data_dir = services[name]["environment"]["DATA_DIR"]
        assert f"blobs:{data_dir}" in services[name]["volumes"], name


def test_flower_auth_and_loopback_only(services: dict[str, Any]) -> None:
    flower = services["flower"]
    assert flower["environment"]["FLOWER_PASSWORD"].startswith("${FLOWER_PASSWORD:?")
    for port in flower["ports"]:
        assert str(port).startswith("127.0.0.1:"), f"Flower published beyond loopback: {port}"
    assert not any("basic-auth" in c for c in _argv(flower["command"])), (
        "the password would show in `ps`; contextq flower passes it by environment"
    )


def test_beat_is_single_and_pidfile_is_container_local(services: dict[str, Any]) -> None:
    beat = services["beat"]
    assert "deploy" not in beat or beat["deploy"].get("replicas", 1) == 1
    argv = _argv(beat["command"])
    pidfile = argv[argv.index("--pidfile") + 1]
    # a pidfile on the shared volume would name a pid of another container
    assert pidfile.startswith("/tmp/")


def test_dockerfile_builds_one_image_running_contextq() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11", text, re.M)
    assert re.search(r"^RUN pip install \.", text, re.M)
    assert re.search(r"^USER (?!root)\w+", text, re.M), "run as a non-root user"
    assert re.search(r"^ENV .*DATA_DIR=/data", text, re.M | re.S)
    cmd = re.search(r"^CMD (\[.*\])$", text, re.M)
    assert cmd is not None
    _check_cli(yaml.safe_load(cmd.group(1)))
    # every package the distribution installs is copied in (pyproject's packages.find)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = [
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    ]
    assert "service" in packages
    for package in packages:
        assert re.search(rf"^COPY {package} ", text, re.M), package


def test_minio_behind_the_s3_profile_and_the_app_configured_for_it(
    compose: dict[str, Any], services: dict[str, Any]
) -> None:
    """`BLOB_STORE=s3 docker compose --profile s3 up`: MinIO, its bucket made before the
    app starts, and every app service pointed at it with the same credentials."""
    minio, bucket = services["minio"], services["minio-bucket"]
    assert minio["profiles"] == ["s3"] and bucket["profiles"] == ["s3"]
    assert str(minio["image"]).startswith("minio/minio")
    assert _argv(minio["command"])[:2] == ["server", "/data"]
    assert _argv(minio["healthcheck"]["test"]) == ["CMD", "mc", "ready", "local"]
    assert "minio-data" in compose["volumes"]
    assert all(str(p).startswith("127.0.0.1:") for p in minio.get("ports", []))
    assert bucket["depends_on"]["minio"]["condition"] == "service_healthy"
    assert _argv(bucket["command"])[:2] == ["mb", "--ignore-existing"]
    assert _argv(bucket["command"])[2] == "minio/${S3_BUCKET:-contextq}"
    root = minio["environment"]
    for name in (*APP_SERVICES, "migrate"):
        env = services[name]["environment"]
        assert env["BLOB_STORE"] == "${BLOB_STORE:-filesystem}", name
        assert env["S3_ENDPOINT_URL"] == "${S3_ENDPOINT_URL:-http://minio:9000}", name
        assert env["S3_BUCKET"] == "${S3_BUCKET:-contextq}", name
        assert env["AWS_ACCESS_KEY_ID"] == root["MINIO_ROOT_USER"], name
        assert env["AWS_SECRET_ACCESS_KEY"] == root["MINIO_ROOT_PASSWORD"], name
    for name in ("api", "worker", "beat"):
        wait = services[name]["depends_on"]["minio-bucket"]
        assert wait == {"condition": "service_completed_successfully", "required": False}, name


def test_compose_settings_are_settings() -> None:
    """Every contextq variable the compose file sets is a field of Settings (a typo
    would be ignored silently: extra="ignore")."""
    from contextq.settings import Settings

    text = (ROOT / "docker-compose.yml").read_text()
    app_env = yaml.safe_load(text)["x-app"]["environment"]
    foreign = {"PROMETHEUS_MULTIPROC_DIR", "FLOWER_USER", "FLOWER_PASSWORD"}
    aws = {k for k in app_env if k.startswith("AWS_")}
    assert set(app_env) - foreign - aws <= set(Settings.model_fields), set(app_env)
