"""Projects: create, list, read with counts, change, delete, search (docs/projects.md).

Each route is an adapter over one use case of `service.projects`, called in one trip to
the threadpool (`api.deps.read` / `write`). `PATCH /v1/files/{id}` (moving a file in or
out) is in `api/routes/files.py`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from api.deps import OwnerDep, SettingsDep, read, write
from api.schemas.projects import (
    ProjectCreate,
    ProjectList,
    ProjectPublic,
    ProjectUpdate,
    SearchHit,
    SearchMode,
    SearchResults,
)
from service import projects

router = APIRouter(tags=["projects"])

MAX_QUERY_CHARS = 20_000


@router.post("/projects", status_code=201, response_model=ProjectPublic)
async def create_project(body: ProjectCreate, owner_id: OwnerDep) -> ProjectPublic:
    """Create a project; its files join by upload (`project_id`) or `PATCH /v1/files/{id}`."""
    view = await write(
        projects.create_project,
        owner_id=owner_id,
        name=body.name,
        instructions=body.instructions,
    )
    return ProjectPublic.of(view)


@router.get("/projects", response_model=ProjectList)
async def list_projects(
    owner_id: OwnerDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: Annotated[str | None, Query(max_length=512)] = None,
) -> ProjectList:
    """Newest first. Pass `next_cursor` back as `cursor` for the next page."""
    views, next_cursor = await read(
        projects.list_projects, owner_id=owner_id, limit=limit, cursor=cursor
    )
    return ProjectList(data=[ProjectPublic.of(v) for v in views], next_cursor=next_cursor)


@router.get("/projects/{project_id}", response_model=ProjectPublic)
async def get_project(project_id: str, owner_id: OwnerDep) -> ProjectPublic:
    view = await read(projects.get_project, owner_id=owner_id, project_id=project_id)
    return ProjectPublic.of(view)


@router.patch("/projects/{project_id}", response_model=ProjectPublic)
async def update_project(project_id: str, body: ProjectUpdate, owner_id: OwnerDep) -> ProjectPublic:
    """Change `name` and/or `instructions` (`instructions: null` clears them)."""
    view = await write(
        projects.update_project,
        owner_id=owner_id,
        project_id=project_id,
        changes=body.model_dump(include=body.model_fields_set),
    )
    return ProjectPublic.of(view)


@router.delete("/projects/{project_id}", status_code=204)
async def delete_project(project_id: str, owner_id: OwnerDep, settings: SettingsDep) -> Response:
    """Delete the project and its files (with their chunks)."""
    await write(
        projects.delete_project, settings=settings, owner_id=owner_id, project_id=project_id
    )
    return Response(status_code=204)


@router.get("/projects/{project_id}/search", response_model=SearchResults)
async def search_project(
    project_id: str,
    owner_id: OwnerDep,
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description="any text")] = "",
    limit: Annotated[int, Query(ge=1, le=projects.MAX_SEARCH_LIMIT)] = 10,
    mode: Annotated[
        SearchMode,
        Query(
            description="hybrid (default): bm25 and dense rankings fused; bm25: the "
            "database's full-text engine alone; dense: static embeddings alone"
        ),
    ] = "hybrid",
) -> SearchResults:
    """The project's chunks that best match `q`, best first (ready files only)."""
    hits = await read(
        projects.search_project,
        owner_id=owner_id,
        project_id=project_id,
        query=q,
        limit=limit,
        mode=mode,
    )
    return SearchResults(data=[SearchHit.of(h) for h in hits])
