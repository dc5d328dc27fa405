"""Routes: context."""

from fastapi import APIRouter

router = APIRouter()
