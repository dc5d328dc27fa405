"""A real S3 endpoint for tests: moto's server mode (`moto_server`, from the `moto[server]`
test dependency) on a loopback port — a real HTTP S3 API in a separate process, not a
patched client. One server per session; each test gets a fresh bucket.

Requests are authenticated as on AWS (moto's INITIAL_NO_AUTH_ACTION_COUNT: the first
calls create an IAM user, its access key and an s3:* policy; every call after needs that
key and a valid signature), so wrong credentials are refused like a real server does.

`available()` says whether `moto_server` is installed; a test that needs it skips
outside CI (with the install command) and fails under CI=true (`require()`).
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.support.procs import ManagedProcess, executable, free_port, wait_until

INSTALL = ".venv/bin/pip install -e '.[test]'  (brings moto[server])"
REGION = "us-east-1"
SETUP_CALLS = 3  # create_user, create_access_key, put_user_policy
POLICY = (
    '{"Version": "2012-10-17", "Statement": '
    '[{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'
)
_buckets = itertools.count(1)


def available() -> bool:
    return Path(executable("moto_server")).exists() or shutil.which("moto_server") is not None


def require() -> None:
    """Skip (outside CI) or fail (CI=true) when there is no moto server to start."""
    if available():
        return
    message = f"needs an S3 server: moto_server is not installed; {INSTALL}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


class S3Server:
    def __init__(self, log_dir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.access_key, self.secret_key = "", ""
        self.process = ManagedProcess(
            [executable("moto_server"), "-H", "127.0.0.1", "-p", str(self.port)],
            env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(SETUP_CALLS)},
            log_path=log_dir / "moto.log",
            name="moto",
        )

    def start(self) -> S3Server:
        self.process.start_and_wait(
            lambda: wait_until(self._answers, timeout=30, what="the moto S3 server")
        )
        self._make_user()
        return self

    def _make_user(self) -> None:
        import boto3

        iam = boto3.client(
            "iam",
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id="setup",
            aws_secret_access_key="setup",
        )
        iam.create_user(UserName="contextq")
        key = iam.create_access_key(UserName="contextq")["AccessKey"]
        iam.put_user_policy(UserName="contextq", PolicyName="s3", PolicyDocument=POLICY)
        self.access_key, self.secret_key = key["AccessKeyId"], key["SecretAccessKey"]

    def stop(self) -> None:
        self.process.stop(timeout=5)

    def _answers(self) -> bool:
        """The port accepts connections (no HTTP request: it would use a setup call)."""
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def credentials(self) -> dict[str, str]:
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_DEFAULT_REGION": REGION,
        }

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=REGION,
        )

    def create_bucket(self) -> str:
        name = f"contextq-test-{os.getpid()}-{next(_buckets)}"
        self.client().create_bucket(Bucket=name)
        return name

    def env(self, bucket: str, prefix: str = "cq/") -> dict[str, str]:
        """What the stack's processes need to use `bucket` on this server."""
        return {
            "BLOB_STORE": "s3",
            "S3_BUCKET": bucket,
            "S3_PREFIX": prefix,
            "S3_ENDPOINT_URL": self.url,
            **self.credentials(),
        }

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]
