"""The boto3 client of the `s3` blob store, its errors in words, and the start-up check.

Credentials come from boto3's standard chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
AWS_SESSION_TOKEN, AWS_PROFILE, an instance or container role); the region from
AWS_REGION / AWS_DEFAULT_REGION (any value for most S3-compatible servers).
"""

from __future__ import annotations

from typing import Any

from contextq.settings import Settings

NOT_FOUND_CODES = {"404", "NoSuchKey", "NotFound", "NoSuchUpload"}
CREDENTIAL_CODES = {"InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken"}
PERMISSIONS = (
    "s3:GetObject, s3:PutObject, s3:DeleteObject, s3:ListBucket, "
    "s3:ListBucketMultipartUploads, s3:AbortMultipartUpload"
)


def make_client(settings: Settings) -> Any:
    import boto3  # noqa: PLC0415 - boto3, for BLOB_STORE=s3 only
    from botocore.config import Config  # noqa: PLC0415

    config = Config(
        connect_timeout=3,
        read_timeout=60,
        retries={"max_attempts": 3, "mode": "standard"},
        max_pool_connections=16,
        # S3-compatible servers (MinIO, Ceph, Garage, moto) are addressed by path
        s3={"addressing_style": "path" if settings.S3_ENDPOINT_URL else "auto"},
        # checksums only where S3 requires them: not every S3-compatible server knows the
        # newer ones (the blob's sha256 is checked on every local copy anyway)
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return boto3.session.Session().client(
        "s3", endpoint_url=settings.S3_ENDPOINT_URL or None, config=config
    )


def error_code(exc: BaseException) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        return str(code) if code is not None else None
    return None


def not_found(exc: BaseException) -> bool:
    return error_code(exc) in NOT_FOUND_CODES


def describe_error(exc: BaseException, *, bucket: str | None = None) -> str:
    """What went wrong and what to set, for a person reading a log or a start-up error."""
    from botocore import exceptions as bx  # noqa: PLC0415 - botocore, for BLOB_STORE=s3 only

    code = error_code(exc)
    if isinstance(exc, bx.NoCredentialsError | bx.PartialCredentialsError):
        return (
            f"no usable AWS credentials ({exc}): set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run with a role)"
        )
    if isinstance(exc, bx.EndpointConnectionError | bx.ConnectTimeoutError | bx.ConnectionError):
        return f"the endpoint cannot be reached ({exc}): check S3_ENDPOINT_URL and the server"
    if code == "NoSuchBucket" or (code == "404" and bucket):
        return f"the bucket {bucket or ''} does not exist: create it, or set S3_BUCKET"
    if code in CREDENTIAL_CODES:
        return (
            f"the credentials were refused ({code}): check AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY"
        )
    if code in {"AccessDenied", "403", "Forbidden"}:
        return f"access denied ({code}): the credentials need {PERMISSIONS} on the bucket"
    return f"{type(exc).__name__}: {exc}"
