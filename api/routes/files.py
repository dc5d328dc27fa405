"""Routes: files."""

from fastapi import APIRouter

router = APIRouter()
