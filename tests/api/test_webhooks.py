"""/v1/webhooks in-process: create (secret once), list, get, delete, owners apart, and the
SSRF guard (docs/events.md) on the real system resolver."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from contextq.errors import ValidationFailed
from service import webhook_urls
from tests.support.api import in_process_client

HOOK = {"url": "http://127.0.0.1:9/hook", "events": ["file.ready", "file.failed"]}


@pytest.fixture
def allow_loopback(make_stack: Any) -> None:
    make_stack(WEBHOOK_ALLOWED_HOSTS="127.0.0.1, Receiver.Internal")


def test_create_list_get_delete(stack, allow_loopback, app_client) -> None:
    created = app_client.post("/v1/webhooks", json=HOOK)
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["url"] == HOOK["url"] and body["events"] == HOOK["events"]
    secret = body["secret"]
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    listed = app_client.get("/v1/webhooks").json()
    assert [w["id"] for w in listed["data"]] == [body["id"]] and listed["next_cursor"] is None
    assert "secret" not in listed["data"][0]
    one = app_client.get(f"/v1/webhooks/{body['id']}").json()
    assert "secret" not in one and one["created_at"] == body["created_at"]
    deliveries = app_client.get(f"/v1/webhooks/{body['id']}/deliveries").json()
    assert deliveries == {"data": [], "next_cursor": None}
    assert app_client.delete(f"/v1/webhooks/{body['id']}").status_code == 204
    assert app_client.get(f"/v1/webhooks/{body['id']}").status_code == 404
    assert app_client.delete(f"/v1/webhooks/{body['id']}").status_code == 404


def test_given_secret_is_kept_and_another_owner_sees_nothing(
    stack, allow_loopback, app_client, make_owner
) -> None:
    secret = "whsec_" + base64.b64encode(b"k" * 24).decode()
    body = app_client.post("/v1/webhooks", json={**HOOK, "secret": secret}).json()
    assert body["secret"] == secret
    with in_process_client(make_owner("mallory").key) as other:
        assert other.get(f"/v1/webhooks/{body['id']}").status_code == 404
        assert other.get(f"/v1/webhooks/{body['id']}/deliveries").status_code == 404
        assert other.delete(f"/v1/webhooks/{body['id']}").status_code == 404
        assert other.get("/v1/webhooks").json()["data"] == []
    assert app_client.get(f"/v1/webhooks/{body['id']}").status_code == 200


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({**HOOK, "events": []}, "events"),
        ({**HOOK, "events": ["file.deleted"]}, "events"),
        ({**HOOK, "secret": "not-a-standard-secret"}, "secret"),
        ({**HOOK, "secret": "whsec_" + base64.b64encode(b"short").decode()}, "secret"),
        ({**HOOK, "url": "ftp://127.0.0.1/x"}, "url"),
        ({**HOOK, "url": "http:///nohost"}, "url"),
        ({**HOOK, "url": "http://127.0.0.1:99999/"}, "url"),
        ({"events": ["file.ready"]}, "url"),
    ],
)
def test_bad_input_is_422_naming_the_field(
    stack, allow_loopback, app_client, payload, field
) -> None:
    resp = app_client.post("/v1/webhooks", json=payload)
    assert resp.status_code == 422, resp.text
    assert any(field in e["loc"] for e in resp.json()["detail"]), resp.json()


REFUSED = [
    ("http://127.0.0.1:8080/hook", "loopback"),
    ("http://10.1.2.3/hook", "private"),
    ("http://192.168.0.10/hook", "private"),
    ("http://172.16.5.5/hook", "private"),
    ("http://100.64.0.1/hook", "private"),  # carrier-grade NAT
    ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
    ("http://169.254.1.1/", "link-local"),
    ("http://localhost:8000/hook", "loopback"),  # a name that resolves to loopback
    ("http://LOCALHOST./hook", "loopback"),
    ("http://[::1]/hook", "loopback"),
    ("http://[::ffff:127.0.0.1]/hook", "loopback"),
    ("http://[fd00:ec2::254]/", "cloud metadata"),
    ("http://[fe80::1]/", "link-local"),
    ("http://2130706433/hook", "loopback"),  # decimal 127.0.0.1
    ("http://0x7f000001/hook", "loopback"),  # hex
    ("http://0177.0.0.1/hook", "loopback"),  # octal
    ("http://127.1/hook", "loopback"),  # short form
    ("http://0.0.0.0/hook", "reserved"),
    ("https://user:pw@127.0.0.1/", "loopback"),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_ssrf_refused_with_422(stack, app_client, url: str, reason: str) -> None:
    resp = app_client.post("/v1/webhooks", json={**HOOK, "url": url})
    assert resp.status_code == 422, resp.text
    (error,) = resp.json()["detail"]
    assert error["loc"] == ["body", "url"]
    assert reason in error["msg"] and "WEBHOOK_ALLOWED_HOSTS" in error["msg"]


def test_allowed_hosts_are_matched_as_written(stack, allow_loopback, app_client) -> None:
    assert app_client.post("/v1/webhooks", json=HOOK).status_code == 201
    # 127.0.0.1 is allowed as written; the same address written otherwise is not
    for url in ("http://2130706433/hook", "http://localhost/hook", "http://[::1]/hook"):
        assert app_client.post("/v1/webhooks", json={**HOOK, "url": url}).status_code == 422


def test_names_are_checked_on_every_address_they_resolve_to() -> None:
    def resolve(host: str, port: int) -> list[str]:
        return {
            "mixed.example": ["93.184.216.34", "10.0.0.7"],
            "public.example": ["93.184.216.34"],
        }[host]

    target = webhook_urls.check("https://public.example/h", allowed_hosts=(), resolve=resolve)
    assert target.addresses == ("93.184.216.34",) and target.port == 443
    assert target.url_for("93.184.216.34") == "https://93.184.216.34:443/h"
    assert target.host_header == "public.example"
    with pytest.raises(ValidationFailed, match=r"10\.0\.0\.7, a private address"):
        webhook_urls.check("https://mixed.example/h", allowed_hosts=(), resolve=resolve)
    allowed = webhook_urls.check(
        "https://mixed.example/h", allowed_hosts={"mixed.example"}, resolve=resolve
    )
    assert allowed.allowed and allowed.addresses == ("93.184.216.34", "10.0.0.7")


def test_an_unresolvable_host_is_refused(stack, app_client) -> None:
    resp = app_client.post("/v1/webhooks", json={**HOOK, "url": "http://no-such-host.invalid/"})
    assert resp.status_code == 422
    assert "does not resolve" in resp.json()["detail"][0]["msg"]
