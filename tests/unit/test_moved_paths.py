"""A fork written against 0.1 keeps working for one release: every module that moved into a
package is importable at its old path (the same module, with a DeprecationWarning naming the new
one), and so is every public name that moved to another module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from graph.moved import MOVED_MODULES as GRAPH_MOVES
from graph.moved import MOVED_NAMES as GRAPH_NAMES
from memory.moved import MOVED_MODULES as MEMORY_MOVES
from memory.moved import MOVED_NAMES as MEMORY_NAMES

# A fresh interpreter: the old paths must work from a cold start, not because a test imported
# the new module first.
CHECK = """
import importlib, importlib.util, json, sys, warnings
moves, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
problems = []
def exists(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # its package is gone too
        return False
for old, new in moves.items():
    if not exists(new):  # a feature this fork deleted (docs/CUSTOMIZING.md): gone at both paths
        continue
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    if module is not importlib.import_module(new):
        problems.append(f"{old} is not {new}")
    if module.__spec__.name != new:
        problems.append(f"{new}'s spec was renamed {module.__spec__.name}")
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    if not any(new in message for message in said):
        problems.append(f"{old}: no DeprecationWarning naming {new}")
for old_module, name, new_module in names:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = getattr(importlib.import_module(old_module), name)
    if value is not getattr(importlib.import_module(new_module), name):
        problems.append(f"{old_module}.{name} is not {new_module}.{name}")
    if not any(issubclass(w.category, DeprecationWarning) for w in caught):
        problems.append(f"{old_module}.{name}: no DeprecationWarning")
print(json.dumps(problems))
"""

# Every name of the two tables: (old module, name, new module).
MOVED_NAMES = [
    (old, name, new)
    for table in (MEMORY_NAMES, GRAPH_NAMES)
    for old, names in table.items()
    for name, new in names.items()
]


def test_every_moved_module_and_name_is_importable_at_its_old_path() -> None:
    moves = {**MEMORY_MOVES, **GRAPH_MOVES}
    assert {"memory.yaml_manager", "memory.turn", "graph.handoff"} <= set(moves)  # and the rest
    done = subprocess.run(
        [sys.executable, "-c", CHECK, json.dumps(moves), json.dumps(MOVED_NAMES)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == []


def test_the_packages_that_were_modules_still_offer_their_names() -> None:
    from graph.models import load_chat_model
    from graph.models.loading import load_chat_model as loaded
    from memory.usage import Usage
    from memory.usage.counts import Usage as counted

    assert load_chat_model is loaded and Usage is counted


# What the LangGraph server imports: langgraph.json's graphs and its http app.
_MANIFEST = json.loads((Path(__file__).parents[2] / "langgraph.json").read_text())
APP_MODULES = [
    spec.split(":")[0].removeprefix("./").removesuffix(".py").replace("/", ".")
    for spec in [*_MANIFEST["graphs"].values(), *_MANIFEST.get("http", {}).values()]
    if isinstance(spec, str) and spec.endswith((".py:graph", ".py:app"))
]


def test_new_code_sees_no_old_path() -> None:
    """No module of the project imports an old path (each would warn at every start)."""
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning:memory.lazy", "-c",
         f"import {', '.join(APP_MODULES)}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "moved to" not in done.stderr
