"""The engine's layering, read from the source (imports inside functions and under
TYPE_CHECKING included): the history package never imports the assembly, which builds
on it; neither imports a web framework, a task queue, a database layer or the server
packages."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[3] / "contextq"
SERVER = ("fastapi", "starlette", "celery", "sqlalchemy", "sqlmodel", "api", "service", "store")


def imported(path: Path) -> set[str]:
    """Every module `path` imports, wherever the import statement stands."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def modules(package: str) -> list[Path]:
    return sorted((ENGINE / package).rglob("*.py"))


def test_the_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from contextq.assembly import plan_context\n")
    assert "contextq.assembly" in imported(source)


@pytest.mark.parametrize("path", modules("history"), ids=lambda p: p.name)
def test_history_never_imports_the_assembly(path: Path) -> None:
    upward = {
        n for n in imported(path) if n == "contextq.assembly" or n.startswith("contextq.assembly.")
    }
    assert not upward, f"{path.name} imports {sorted(upward)}"


@pytest.mark.parametrize(
    "path", modules("history") + modules("assembly"), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_engine_imports_no_server_layer(path: Path) -> None:
    found = {n for n in imported(path) if n.split(".")[0] in SERVER}
    assert not found, f"{path.name} imports {sorted(found)}"
