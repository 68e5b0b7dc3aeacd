"""The editor mounted on a real `langgraph dev` server with custom auth on custom routes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.webapp.editor_process import ROOT, free_port

pytestmark = pytest.mark.slow
LANGGRAPH = Path(sys.executable).parent / "langgraph"

TINY_GRAPH = '''
"""A one-node graph: the server needs a graph; this test is about the editor beside it."""
from typing import TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    text: str

def echo(state: State) -> State:
    return {"text": state["text"]}

builder = StateGraph(State).add_node("echo", echo)
graph = builder.add_edge(START, "echo").add_edge("echo", END).compile()
'''

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

LANGGRAPH_JSON = {
    "dependencies": ["."],
    "graphs": {"tiny": "./tiny_graph.py:graph"},
    "http": {"app": "./webapp/app.py:app", "enable_custom_route_auth": True},
    "auth": {"path": "./editor_auth.py:auth", "disable_studio_auth": True},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli is not installed in this environment")
    app_dir = tmp_path_factory.mktemp("server-app")
    ignore = shutil.ignore_patterns("__pycache__")
    for package in ("memory", "prompts", "webapp"):
        shutil.copytree(ROOT / package, app_dir / package, ignore=ignore)
    (app_dir / "tiny_graph.py").write_text(TINY_GRAPH)
    (app_dir / "editor_auth.py").write_text(EDITOR_AUTH)
    (app_dir / "langgraph.json").write_text(json.dumps(LANGGRAPH_JSON))
    port = free_port()
    env = {
        **os.environ,
        "GULFSTREAM_MEMORY_BACKEND": f"yaml:{app_dir / 'data'}",
        "GULFSTREAM_EDITOR_POLL_SECONDS": "0.2",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
    }
    log = (app_dir / "server.log").open("w")
    process = subprocess.Popen(
        [
            str(LANGGRAPH),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=app_dir,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"{base}/ok", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{(app_dir / 'server.log').read_text()}")
            time.sleep(0.25)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def as_user(token: str | None, **extra: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "X-Gulfstream-CSRF": "1", **extra}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def test_page_loads_without_a_token_but_data_needs_one(server: str) -> None:
    page = httpx.get(f"{server}/memories/")
    assert page.status_code == 200 and "static/editor.js" in page.text
    assert httpx.get(f"{server}/memories/static/editor.js").status_code == 200
    anonymous = httpx.get(f"{server}/memories/api/memories")
    assert anonymous.status_code == 401 and anonymous.json()["field"] == "user"
    forged = httpx.get(f"{server}/memories/api/memories", headers={"X-Gulfstream-User": "alice"})
    assert forged.status_code == 401  # without a token the header names nobody
    bad_token = httpx.get(f"{server}/memories/api/memories", headers=as_user("nope"))
    assert bad_token.status_code == 401
    studio = httpx.get(f"{server}/memories/api/memories", headers={"x-auth-scheme": "langsmith"})
    assert studio.status_code in (401, 403)


def test_each_authenticated_user_sees_only_their_own_memories(server: str) -> None:
    api = f"{server}/memories/api"
    added = httpx.post(
        f"{api}/memories",
        headers=as_user("token-alice"),
        json={"description": "Alice likes jasmine tea", "theme": "food"},
    )
    assert added.status_code == 201, added.text
    memory_id = added.json()["id"]
    mine = httpx.get(f"{api}/memories", headers=as_user("token-alice")).json()
    assert mine["total"] == 1
    # Bob cannot see or change it, not even by claiming to be Alice in the local-mode header.
    bob = as_user("token-bob", **{"X-Gulfstream-User": "alice"})
    assert httpx.get(f"{api}/whoami", headers=bob).json() == {
        "user_id": "bob",
        "auth_mode": "auth",
        "backend": "yaml",
    }
    assert httpx.get(f"{api}/memories", headers=bob).json()["total"] == 0
    assert httpx.get(f"{api}/memories/{memory_id}", headers=bob).status_code == 404
    deleted = httpx.request("DELETE", f"{api}/memories/{memory_id}", headers=bob, json={})
    assert deleted.status_code == 404
    assert httpx.get(f"{api}/memories", headers=as_user("token-alice")).json()["total"] == 1


def test_cross_site_form_post_is_refused_under_the_server(server: str) -> None:
    response = httpx.post(
        f"{server}/memories/api/memories",
        headers={"Authorization": "Bearer token-alice"},
        data={"description": "forged", "theme": "t"},
    )
    assert response.status_code == 415


def test_event_stream_flows_through_the_server(server: str) -> None:
    api = f"{server}/memories/api"
    with httpx.stream("GET", f"{api}/events", headers=as_user("token-bob"), timeout=20) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"
        httpx.post(
            f"{api}/memories",
            headers=as_user("token-bob"),
            json={"description": "Bob cycles to work", "theme": "habits"},
        )
        for line in lines:
            if line.startswith("data:") and "Bob cycles to work" in line:
                break


def test_slashless_prefix_reaches_the_page(server: str) -> None:
    response = httpx.get(f"{server}/memories")
    assert response.status_code == 307 and response.headers["location"] == "/memories/"
