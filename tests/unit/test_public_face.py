"""The library's public face (docs/API.md): every name `memory` and `memory.integration` export
is documented there, used in one of its examples (run by tests/integration/test_doc_blocks.py),
and, when it is a class or a function, carries a docstring of its own."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

import memory
import memory.integration

ROOT = Path(__file__).resolve().parents[2]
API = (ROOT / "docs" / "API.md").read_text(encoding="utf-8")
EXAMPLES = "\n".join(re.findall(r"```python\n(.*?)```", API, re.S))
TABLES = "\n".join(line for line in API.splitlines() if line.startswith("| `"))
FACE = [(module, name) for module in (memory, memory.integration) for name in module.__all__]


@pytest.mark.parametrize(("module", "name"), FACE, ids=[f"{m.__name__}.{n}" for m, n in FACE])
def test_every_public_name_is_documented_used_and_explained(module: object, name: str) -> None:
    assert f"`{name}`" in TABLES, f"{name} has no row in docs/API.md"
    assert re.search(rf"\b{name}\b", EXAMPLES), f"no example in docs/API.md uses {name}"
    value = getattr(module, name)
    if inspect.isclass(value) or inspect.isfunction(value):
        assert (value.__doc__ or "").strip(), f"{name} has no docstring"


def test_the_face_is_at_most_forty_names() -> None:
    """Few enough to read in one sitting: what an app needs, not what the library holds."""
    assert len(memory.__all__) + len(memory.integration.__all__) <= 40


def test_the_apps_import_nothing_the_face_does_not_export() -> None:
    """graph/, prompts/ and webapp/ import `memory` and `memory.integration` only (lint-imports
    checks the modules); every name they take from them is one the face exports, not a module
    of it."""
    exported = {"memory": memory.__all__, "memory.integration": memory.integration.__all__}
    taken = set()
    apps = [ROOT / "graph", ROOT / "prompts", ROOT / "webapp"]  # the editor and MCP included
    for path in [path for app in apps for path in app.rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in exported:
                taken |= {(node.module, alias.name) for alias in node.names}
    assert taken, "the app imports nothing of the library?"
    allowed = {("memory", "integration")}  # the face's second module, as a module
    assert {(m, n) for m, n in taken if n not in exported[m]} - allowed == set()
