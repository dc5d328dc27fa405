"""No input makes the files API answer 5xx (hypothesis over bodies, headers and ids)."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.files import multipart_body

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

content_types = st.one_of(
    st.just("multipart/form-data; boundary=zz"),
    st.builds(
        lambda b: f"multipart/form-data; boundary={b}",
        st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=300),
    ),
    st.sampled_from(
        [
            "",
            "text/plain",
            "application/json",
            "multipart/form-data",
            "multipart/mixed; boundary=zz",
            'multipart/form-data; boundary="a b"',
        ]
    ),
)


@FUZZ
@given(ctype=content_types, body=st.binary(max_size=2048))
def test_random_bodies_never_5xx(stack, app_client, ctype, body) -> None:
    resp = app_client.post("/v1/files", content=body, headers={"Content-Type": ctype})
    assert resp.status_code < 500, (ctype, body, resp.text)
    assert resp.status_code in (202, 400, 413, 415, 422), resp.status_code


@FUZZ
@given(
    filename=st.binary(max_size=300),
    data=st.binary(max_size=512),
    fields=st.dictionaries(
        st.sampled_from(["conversation_id", "project_id", "x"]), st.text(max_size=80), max_size=3
    ),
)
def test_random_multipart_parts_never_5xx(stack, app_client, filename, data, fields) -> None:
    filename = filename.replace(b'"', b"").replace(b"\r", b"").replace(b"\n", b"")
    ctype, body = multipart_body(filename, data, fields=fields)
    resp = app_client.post("/v1/files", content=body, headers={"Content-Type": ctype})
    # 404: a conversation_id / project_id that is not one of the owner's
    assert resp.status_code in (202, 400, 404, 422), (resp.status_code, resp.text)
    if resp.status_code == 202:
        got = resp.json()
        assert got["size_bytes"] == len(data) and got["filename"]
        assert not any(c in got["filename"] for c in "/\\\x00\r\n")


@FUZZ
@given(file_id=st.text(max_size=200))
def test_random_ids_never_5xx(stack, app_client, file_id) -> None:
    for method, suffix in (("GET", ""), ("GET", "/content"), ("DELETE", "")):
        resp = app_client.request(method, f"/v1/files/{quote(file_id, safe='')}{suffix}")
        assert resp.status_code < 500, (method, file_id, resp.text)
