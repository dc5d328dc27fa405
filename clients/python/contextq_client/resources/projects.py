"""`client.projects`: projects, and the search over their documents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

from contextq_client import models as m
from contextq_client.routing import body, params, route, seg
from contextq_client.transport import Resource, SyncTransport


class Projects(Resource[SyncTransport]):
    @route("POST", "/v1/projects")
    def create(self, name: str, *, instructions: str | None = None) -> m.Project:
        payload = body(name=name, instructions=instructions)
        return m.Project.model_validate(self._t.request_json("POST", "/v1/projects", json=payload))

    @route("GET", "/v1/projects")
    def list(self, *, limit: int | None = None, cursor: str | None = None) -> m.Page[m.Project]:
        response = self._t.request("GET", "/v1/projects", params=params(limit=limit, cursor=cursor))
        return m.Page[m.Project].model_validate(response.json())

    def iter(self, *, page_size: int = 100) -> Iterator[m.Project]:
        """Every project, page after page."""
        cursor: str | None = None
        while True:
            page = self.list(limit=page_size, cursor=cursor)
            yield from page.data
            cursor = page.next_cursor
            if cursor is None:
                return

    @route("GET", "/v1/projects/{project_id}")
    def get(self, project_id: str) -> m.Project:
        response = self._t.request("GET", f"/v1/projects/{seg(project_id)}")
        return m.Project.model_validate(response.json())

    @route("PATCH", "/v1/projects/{project_id}")
    def update(self, project_id: str, **fields: Any) -> m.Project:
        """Change `name` and/or `instructions`."""
        response = self._t.request("PATCH", f"/v1/projects/{seg(project_id)}", json=fields)
        return m.Project.model_validate(response.json())

    @route("DELETE", "/v1/projects/{project_id}")
    def delete(self, project_id: str) -> None:
        self._t.request("DELETE", f"/v1/projects/{seg(project_id)}")

    @route("GET", "/v1/projects/{project_id}/search")
    def search(
        self,
        project_id: str,
        q: str,
        *,
        limit: int | None = None,
        mode: Literal["hybrid", "bm25", "dense"] | None = None,
    ) -> m.SearchResults:
        """The best chunks, best first: `hybrid` (the default: bm25 and dense fused),
        `bm25` (words only) or `dense` (meaning only)."""
        path = f"/v1/projects/{seg(project_id)}/search"
        response = self._t.request("GET", path, params=params(q=q, limit=limit, mode=mode))
        return m.SearchResults.model_validate(response.json())
