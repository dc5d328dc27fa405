"""Routes: conversations."""

from fastapi import APIRouter

router = APIRouter()
