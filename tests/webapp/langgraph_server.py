"""Run a copy of the app under a real `langgraph dev` (no reload, a free port) for the tests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.webapp.editor_process import ROOT, free_port, running

LANGGRAPH = Path(sys.executable).parent / "langgraph"

# The configuration the README documents: tokens map to users; a request without a token passes
# as an unauthenticated user, so the page and its assets load and the editor refuses data to it.
EDITOR_AUTH = """
from langgraph_sdk import Auth

auth = Auth()
TOKENS = {"token-alice": "alice", "token-bob": "bob"}

@auth.authenticate
async def authenticate(authorization: str | None):
    if authorization and authorization.startswith("Bearer "):
        user = TOKENS.get(authorization.removeprefix("Bearer "))
        if user is None:
            raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
        return user
    return {"identity": "anonymous", "is_authenticated": False}
"""


def langgraph_json(graphs: dict[str, str], auth: bool = True) -> dict[str, Any]:
    """The editor mounted with custom auth on its routes, as the README documents; without
    `auth`, mounted as the repository's langgraph.json does (local mode: `?user=`)."""
    if not auth:
        return {"dependencies": ["."], "graphs": graphs, "http": {"app": "./webapp/app.py:app"}}
    return {
        "dependencies": ["."],
        "graphs": graphs,
        "http": {"app": "./webapp/app.py:app", "enable_custom_route_auth": True},
        "auth": {"path": "./editor_auth.py:auth", "disable_studio_auth": True},
    }


@contextmanager
def run_langgraph_dev(
    app_dir: Path,
    graph_files: dict[str, str],
    graphs: dict[str, str],
    *,
    auth: bool = True,
    **extra_env: str,
) -> Iterator[str]:
    """Copy the packages and `graph_files` into `app_dir`, start `langgraph dev` there and yield
    its base URL. (`langgraph dev` keeps its state in ./.langgraph_api: never the repository.)
    `auth=False` mounts the editor without custom auth, as the repository's langgraph.json does."""
    with run_langgraph_dev_process(app_dir, graph_files, graphs, auth=auth, **extra_env) as (
        base,
        _,
    ):
        yield base


@contextmanager
def run_langgraph_dev_process(
    app_dir: Path,
    graph_files: dict[str, str],
    graphs: dict[str, str],
    *,
    auth: bool = True,
    **extra_env: str,
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`run_langgraph_dev`, yielding the server process too (to measure it)."""
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed in this environment")
    ignore = shutil.ignore_patterns("__pycache__")
    for package in (
        "graph",
        "memory",
        "prompts",
        "webapp",
    ):  # the editor reads memory.integration.settings
        shutil.copytree(ROOT / package, app_dir / package, ignore=ignore)
    for name, source in {**graph_files, "editor_auth.py": EDITOR_AUTH}.items():
        (app_dir / name).write_text(source)
    (app_dir / "langgraph.json").write_text(json.dumps(langgraph_json(graphs, auth)))
    port = free_port()
    env = {
        **os.environ,
        "GULFSTREAM_EDITOR_POLL_SECONDS": "0.2",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        # The copy, not the editable install of the project, must provide the packages.
        "PYTHONPATH": str(app_dir),
        **extra_env,
    }
    env.pop("GULFSTREAM_EDITOR_HOSTS", None)
    command = [str(LANGGRAPH), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with running(command, app_dir, env, f"{base}/ok", 90, app_dir / "server.log") as process:
        yield base, process
