"""Routes: jobs."""

from fastapi import APIRouter

router = APIRouter()
