"""A forker's `.env` shapes the app but never what `make unit` checks: the minimal bot's `.env`
in the project folder, `make unit` run there (issue 45's first-day trap)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.test_delete_a_feature import copy_environment, copy_tree, write_site
from tests.unit.test_dotenv import minimal_bot_block

BIN = Path(sys.executable).parent
# The unit tests a `.env` broke: the graph `langgraph dev` serves is built at import, from the
# settings (compaction off: no `compact` node), and the preset's own test.
BROKEN = "test_shape_and_no_own_checkpointer_for_langgraph_dev or test_the_minimal_preset"


@pytest.mark.slow  # a copy of the tree, a fresh pytest and a fresh interpreter
def test_the_minimal_bot_env_shapes_the_app_and_leaves_make_unit_green(tmp_path: Path) -> None:
    tree = tmp_path / "fork"
    copy_tree(tree, mypy_cache=False)
    write_site(tree)
    backend = "GULFSTREAM_MEMORY_BACKEND=sqlite:data/memory.sqlite\n"
    (tree / ".env").write_text(minimal_bot_block() + "\n" + backend)
    env = copy_environment(tree) | {"PYTEST_ADDOPTS": f"-k '{BROKEN}'"}

    shaped = "from graph.agent import graph; print(sorted(graph.nodes))"
    app = subprocess.run([sys.executable, "-c", shaped], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert app.returncode == 0, app.stderr[-3000:]
    assert "compact" not in app.stdout and "agent" in app.stdout  # the .env is read

    # make unit as a user runs it, with this venv instead of the copy's (missing) .venv.
    unit = subprocess.run(["make", "unit", "STAMP=", f"BIN={BIN}"], cwd=tree, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert unit.returncode == 0, unit.stdout[-4000:] + unit.stderr[-2000:]
    assert "2 passed" in unit.stdout and "failed" not in unit.stdout, unit.stdout[-2000:]
