"""The thin client as an agent's environment gets it (docs/client.md): both wheels built from
this checkout, the client's installed ALONE into a fresh venv (its dependencies from the
package registry), and the README's quick start run there against a real `contextq up`
with none of the server's libraries loaded."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import contextq_client
from contextq.testing import RunningStack

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CLIENT_SRC = ROOT / "clients" / "python"
# what an agent's environment must never pull in through the client
SERVER_ONLY = ("celery", "fastapi", "sqlalchemy", "sqlmodel", "markitdown", "PIL", "av")
# a wheel's top-level directory per distribution
CLIENT_TOP = {"contextq_client", f"contextq_client-{contextq_client.__version__}.dist-info"}
MAX_CLIENT_INSTALL_MB = 40  # httpx + pydantic (pydantic-core is most of it): ~16 MB today
SKIP = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")


def _pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _server_tree(into: Path) -> Path:
    """The server's sources as its build sees them (pyproject's packages), in a copy, so
    the build leaves nothing in the checkout."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    includes = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, into / name)
    for pattern in includes:
        for path in ROOT.glob(pattern.split(".")[0]):
            if path.is_dir() and (path / "__init__.py").exists():
                shutil.copytree(path, into / path.name, ignore=SKIP)
    return into


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    client = tmp_path_factory.mktemp("src") / "client"
    shutil.copytree(CLIENT_SRC, client, ignore=SKIP)
    server = _server_tree(tmp_path_factory.mktemp("server"))
    for source in (client, server):
        _pip("wheel", "--no-deps", "--wheel-dir", str(out), str(source))
    (client_wheel,) = out.glob("contextq_client-*.whl")
    (server_wheel,) = out.glob("contextq-*.whl")
    return {"client": client_wheel, "server": server_wheel}


def _requires(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        meta = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        text = archive.read(meta).decode()
    return [
        line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("Requires-Dist")
    ]


def test_each_wheel_holds_its_own_package(wheels: dict[str, Path]) -> None:
    with zipfile.ZipFile(wheels["client"]) as archive:
        tops = {name.split("/", 1)[0] for name in archive.namelist()}
        assert tops == CLIENT_TOP
        assert "contextq_client/integrations/pydantic_ai.py" in archive.namelist()
        assert "contextq_client/py.typed" in archive.namelist()
    runtime = [r for r in _requires(wheels["client"]) if "extra ==" not in r]
    assert sorted(r.split(">")[0] for r in runtime) == ["httpx", "pydantic"], runtime
    with zipfile.ZipFile(wheels["server"]) as archive:
        assert not [n for n in archive.namelist() if n.startswith("contextq_client/")]
    pin = f"contextq-client=={contextq_client.__version__}"
    assert pin in _requires(wheels["server"]), "the server pins the client of this checkout"


QUICK_START_CHECK = """
import json, sys
try:
    import contextq
    server = contextq.__file__
except ModuleNotFoundError:
    server = None
print(json.dumps({"loaded": [m for m in %r if m in sys.modules], "server": server}))
"""


def _readme_quick_start() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- sdk-quickstart:start -->", 1)[1].split(
        "<!-- sdk-quickstart:end -->"
    )[0]
    code = block.split("```python\n", 1)[1].rsplit("```", 1)[0]
    # the same quick start, written for the thin client's import name
    assert "from contextq import Client\n" in code
    return code.replace("from contextq import Client\n", "from contextq_client import Client\n")


def _site_packages_mb(venv: Path) -> float:
    (site,) = venv.glob("lib/python3*/site-packages")
    return sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) / 1e6


def test_client_wheel_alone_runs_the_quick_start(
    wheels: dict[str, Path], contextq_stack: RunningStack, tmp_path: Path
) -> None:
    venv = tmp_path / "agent-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    _pip("--python", str(python), "install", str(wheels["client"]))
    code = _readme_quick_start() + QUICK_START_CHECK % (SERVER_ONLY,)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"CONTEXTQ_API_URL": contextq_stack.base_url, "CONTEXTQ_API_KEY": contextq_stack.api_key}
    done = subprocess.run(
        [str(python), "-c", code],
        env=env,
        cwd=tmp_path,  # not the checkout: nothing of the server is importable
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert lines[0].startswith("ready ")
    assert lines[2] == "On Friday. anthropic"
    assert lines[3] == "plan.md ready"
    report = json.loads(lines[-1])
    assert report == {"loaded": [], "server": None}
    size = _site_packages_mb(venv)
    assert size < MAX_CLIENT_INSTALL_MB, f"the client's install grew to {size:.1f} MB"
    print(
        f"client wheel {wheels['client'].stat().st_size / 1e3:.0f} kB, installed with its "
        f"dependencies {size:.1f} MB; server wheel {wheels['server'].stat().st_size / 1e3:.0f} kB"
    )
