"""The editor mounted on a real `langgraph dev` server with custom auth on custom routes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memory.archive import ArchivedMessage  # feature: archive
from memory.archive.sqlite_archive import SqliteArchive  # feature: archive
from tests.webapp.langgraph_server import run_langgraph_dev

pytestmark = pytest.mark.slow

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


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-app")


@pytest.fixture(scope="module")
def server(app_dir: Path) -> Iterator[str]:
    with run_langgraph_dev(
        app_dir,
        {"tiny_graph.py": TINY_GRAPH},
        {"tiny": "./tiny_graph.py:graph"},
        GULFSTREAM_MEMORY_BACKEND=f"yaml:{app_dir / 'data'}",
    ) as base:
        yield base


def as_user(token: str | None, **extra: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "X-Gulfstream-CSRF": "1", **extra}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def test_the_server_starts_without_a_docstring_traceback(server: str, app_dir: Path) -> None:
    # It reads each route handler's docstring as OpenAPI YAML as it starts.
    log = (app_dir / "server.log").read_text()
    assert "Unable to parse docstring" not in log, log[-3000:]


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
    who = httpx.get(f"{api}/whoami", headers=bob).json()
    assert isinstance(who.pop("features"), dict)  # what the page shows: test_features_off.py
    assert who == {
        "user_id": "bob",
        "auth_mode": "auth",
        "backend": "yaml",
    }
    assert httpx.get(f"{api}/memories", headers=bob).json()["total"] == 0
    assert httpx.get(f"{api}/memories/{memory_id}", headers=bob).status_code == 404
    deleted = httpx.request("DELETE", f"{api}/memories/{memory_id}", headers=bob, json={})
    assert deleted.status_code == 404
    assert httpx.get(f"{api}/memories", headers=as_user("token-alice")).json()["total"] == 1


def test_the_profile_is_each_signed_in_users_own(server: str) -> None:
    api = f"{server}/memories/api"
    body = {"persona": "Answer like a tide table.", "human": "Alice, a harbour pilot."}
    saved = httpx.put(f"{api}/profile", headers=as_user("token-alice"), json=body)
    assert saved.status_code == 200, saved.text
    assert httpx.get(f"{api}/profile", headers=as_user(None)).status_code == 401
    assert httpx.get(f"{api}/profile", headers=as_user("nope")).status_code == 401
    # Bob's token reads and writes Bob's profile, whoever he claims to be.
    bob = as_user("token-bob", **{"X-Gulfstream-User": "alice"})
    assert httpx.get(f"{api}/profile", headers=bob).json()["human"] == ""
    assert httpx.put(f"{api}/profile", headers=bob, json={"human": "forged"}).status_code == 200
    alice = httpx.get(f"{api}/profile", headers=as_user("token-alice")).json()
    assert {part: alice[part] for part in body} == body
    no_csrf = {"Authorization": "Bearer token-alice", "Content-Type": "application/json"}
    assert httpx.put(f"{api}/profile", headers=no_csrf, json={"human": "x"}).status_code == 403


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


def test_dev_server_answers_the_editor_only_under_a_loopback_name(server: str) -> None:
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host header.
    rebound = {"Host": "evil.example:2024", **as_user("token-alice")}
    for path in ("/memories/", "/memories/api/memories"):
        refused = httpx.get(f"{server}{path}", headers=rebound)
        assert refused.status_code == 400 and refused.json()["field"] == "host"
    port = server.rsplit(":", 1)[1]
    local = httpx.get(f"http://localhost:{port}/memories/api/whoami", headers=as_user("token-bob"))
    assert local.status_code == 200 and local.json()["user_id"] == "bob"


def test_no_cors_header_on_the_editor_even_for_a_signed_in_user(server: str) -> None:
    # The server's CORS default would let any site read a response its user's token unlocked.
    evil = {"Origin": "https://evil.example"}
    refused = httpx.get(
        f"{server}/memories/api/memories", headers={**as_user("token-alice"), **evil}
    )
    assert refused.status_code == 403 and refused.json()["field"] == "origin"
    for response in (refused, httpx.get(f"{server}/memories/", headers=evil)):
        assert not [h for h in response.headers if h.lower().startswith("access-control-")]


@pytest.mark.uses("archive")
def test_the_conversation_search_is_the_signed_in_users_own(server: str, app_dir: Path) -> None:
    archive = SqliteArchive(app_dir / "data" / "conversations", "alice")
    archive.add([ArchivedMessage("alice", "t1", "c1", "m1", "user", "Alice's locker is 4711",
                                 time.time())])  # fmt: skip
    api = f"{server}/memories/api/conversations"
    assert httpx.get(api, params={"q": "locker"}).status_code == 401
    page = httpx.get(f"{server}/memories/conversations/")
    assert page.status_code == 200  # the page loads anonymously; its data does not
    alice = httpx.get(api, params={"q": "locker"}, headers=as_user("token-alice"))
    assert "4711" in alice.text
    bob = httpx.get(api, params={"q": "locker"},
                    headers=as_user("token-bob", **{"X-Gulfstream-User": "alice"}))  # fmt: skip
    assert bob.status_code == 200 and bob.json()["hits"] == []
