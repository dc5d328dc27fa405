"""The architecture, checked where configuration cannot: the import contracts in
pyproject.toml (`lint-imports`, run by scripts/lint) see a deferred import, the first-party
modules form no import circle even through a package's `__init__`, and a process that
only reads the settings or only uses the engine loads no more than contextq/__init__.py
promises."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterable
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]
SERVER_LIBRARIES = ("fastapi", "starlette", "celery", "kombu", "sqlalchemy", "sqlmodel", "httpx")


def fresh_modules(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code`."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def under(modules: Iterable[str], *packages: str) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in packages or m.startswith(packages))


def test_the_settings_load_no_history_engine_and_no_server_library() -> None:
    loaded = fresh_modules("from contextq.settings import Settings\nSettings()")
    assert not under(loaded, "contextq.history", "contextq.assembly", "contextq.files")
    assert not under(loaded, *SERVER_LIBRARIES, "tiktoken", "contextq_client")


def test_the_engine_loads_no_server_library() -> None:
    """contextq/__init__.py: the engine imports no FastAPI, Celery or SQL, and a process
    that only uses it never imports httpx (the thin client loads when asked for)."""
    engine = (
        "contextq.history",
        "contextq.assembly",
        "contextq.files.pipeline",
        "contextq.retrieval.dense",
        "contextq.workspace",
        "contextq.builtin_tools",
        "contextq.startup",
    )
    loaded = fresh_modules("\n".join(f"import {name}" for name in engine))
    assert set(engine) <= loaded
    assert not under(loaded, *SERVER_LIBRARIES, "contextq_client", "service", "store", "api")


def _first_party_graph() -> grimp.ImportGraph:
    return grimp.build_graph(*CONFIG["root_packages"], cache_dir=None)


def _acyclic_contract() -> dict[str, object]:
    [contract] = [c for c in CONFIG["contracts"] if c["type"] == "acyclic_siblings"]
    return contract


def _edges(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    """Every module's imports, plus the packages an import runs the `__init__` of (a
    package the importer is inside of is already running: no edge)."""
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        direct = set(graph.find_modules_directly_imported_by(module))
        targets = set(direct)
        for target in direct:
            parent = target.rpartition(".")[0]
            while parent:
                if parent in graph.modules and not module.startswith(parent + "."):
                    targets.add(parent)
                parent = parent.rpartition(".")[0]
        targets.discard(module)
        edges[module] = targets
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(edges.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def test_circles_finds_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_first_party_module_is_in_an_import_circle() -> None:
    """No circle among the modules, imports inside functions and under TYPE_CHECKING
    included (issue 28's part B closed the last ones): none is excused, here or in the
    acyclic contract."""
    assert "ignore_imports" not in _acyclic_contract()
    assert circles(_edges(_first_party_graph())) == []


@pytest.mark.parametrize(
    "deferred",
    [
        "def plan():\n    from eng.high import top\n    return top",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from eng.high import top",
    ],
    ids=["inside-a-function", "under-type-checking"],
)
def test_the_contracts_see_an_import_that_goes_up(tmp_path: Path, deferred: str) -> None:
    """What tests/engine/history/test_import_direction.py checked by hand: an upward
    import that hides in a function (or under TYPE_CHECKING) breaks a layers contract."""
    package = tmp_path / "eng"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("from eng import low\ntop = 1\n")
    (package / "low.py").write_text(deferred + "\n")
    (tmp_path / ".importlinter").write_text(
        textwrap.dedent(
            """\
            [importlinter]
            root_package = eng

            [importlinter:contract:layers]
            name = high over low
            type = layers
            layers =
                eng.high
                eng.low
            """
        )
    )
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "eng.low -> eng.high" in done.stdout
