"""`make lint`'s import contracts (pyproject.toml, `lint-imports`): the packages as they are keep
them, and a new circle, an upward import or memory/ importing graph/ breaks them."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_delete_a_feature import copy_environment, write_site

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    caches = shutil.ignore_patterns("__pycache__")
    for package in ("graph", "memory", "prompts", "webapp"):
        if (ROOT / package).is_dir():  # a fork may have deleted the web app
            shutil.copytree(ROOT / package, copy / package, ignore=caches)
    shutil.copy2(ROOT / "pyproject.toml", copy / "pyproject.toml")
    write_site(copy)  # the copy's packages, not this checkout's through the venv
    return copy


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    command = [str(LINT_IMPORTS), "--no-cache"]
    env = copy_environment(tree)
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=120)


def add_import(tree: Path, module: str, line: str) -> None:
    path = tree / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text() + f"\n{line}  # noqa: E402\n")


def test_the_packages_keep_every_contract(tree: Path) -> None:
    done = lint_imports(tree)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken", done.stdout), done.stdout[-2000:]


def test_an_import_back_up_from_the_store_breaks_the_layers_and_makes_a_circle(tree: Path) -> None:
    add_import(tree, "memory.store.item", "from memory.long_term import LongTermMemory")
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "from the facade down to the store and text BROKEN" in done.stdout
    assert "no import circles, at any depth BROKEN" in done.stdout
    assert "memory.store.item -> memory.long_term" in done.stdout


def test_a_circle_hidden_in_a_function_still_counts(tree: Path) -> None:
    # memory.integration.writing.said_recently is imported by memory.integration.writing.ltm_write:
    # an import back, even one made only when a function runs, closes a circle.
    path = tree / "memory/integration/writing/said_recently.py"
    late = "\n\ndef _late() -> None:\n    from memory.integration.writing.ltm_write import ltm_write  # noqa\n"  # noqa: E501
    path.write_text(path.read_text() + late)
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "no import circles, at any depth BROKEN" in done.stdout


def test_memory_importing_graph_is_refused(tree: Path) -> None:
    add_import(tree, "memory.writer.consumer", "from graph.context import Context")
    done = lint_imports(tree)
    assert done.returncode == 1
    assert "memory/ and prompts/ never import graph/ or webapp/ BROKEN" in done.stdout


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("graph.tools", "from memory.store.item import MemoryItem"),  # two levels down
        ("graph.tools", "from memory.integration.settings import get_settings"),  # past the face
        ("webapp.routes", "from memory.archive import archives"),  # the editor, into the core
        ("webapp.mcp.server", "from memory.integration.writing import write_now"),  # MCP
    ],
)
def test_an_app_reaching_past_the_public_face_is_refused(
    tree: Path, module: str, line: str
) -> None:
    add_import(tree, module, line)
    done = lint_imports(tree)
    assert done.returncode == 1
    face = "graph/, prompts/ and webapp/ import memory/ only through its public face BROKEN"
    assert face in done.stdout
