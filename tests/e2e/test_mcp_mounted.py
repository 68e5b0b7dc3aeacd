"""The MCP endpoint mounted on a real `langgraph dev` (GULFSTREAM_MCP=1) under
memory/integration/auth.py:
the SDK's client acts as the signed-in user, on the server's own store, and never for another."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from langgraph_sdk import get_client
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.server import DevServer, copy_app
from tests.e2e.test_isolation import auth_server, bearer

pytestmark = pytest.mark.slow

FACT = "My daughter's name is Mia"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream-mcp") / "app")
    with auth_server(app, "./memory/integration/auth.py:auth", {"GULFSTREAM_MCP": "1"}) as dev:
        yield dev


@asynccontextmanager
async def as_user(server: DevServer, user: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers=bearer(user), timeout=120) as http:
        transport = streamable_http_client(f"{server.url}/memories/mcp", http_client=http)
        async with Client(transport) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def texts(found: dict[str, Any]) -> list[str]:
    return [memory["description"] for memory in found["memories"]]


async def test_the_signed_in_user_remembers_and_no_one_else_reads_it(server: DevServer) -> None:
    async with as_user(server, "alice") as alice:
        written = await call(alice, "remember", fact=FACT)
        assert written["status"] == "written", written
        assert any(
            "Mia" in t for t in texts(await call(alice, "search_memories", query="daughter"))
        )
    [mia] = written["changes"]
    async with as_user(server, "bob") as bob:
        assert texts(await call(bob, "search_memories", query="daughter Mia")) == []
        assert (await call(bob, "list_memories"))["total"] == 0
        refused = await bob.call_tool("show_memory", {"id": mia["id"]})
        assert refused.is_error
    # Stored where the chat reads it: the server's store, in alice's own namespace.
    items = await get_client(url=server.url, headers=bearer("alice")).store.search_items(
        ("memories", "alice"), limit=100
    )
    assert any("Mia" in str(item["value"]) for item in items["items"])


async def test_another_users_thread_reads_as_unknown(server: DevServer) -> None:
    client = get_client(url=server.url, headers=bearer("alice"))
    thread = (await client.threads.create())["thread_id"]
    async with as_user(server, "bob") as bob:
        result = await bob.call_tool("search_memories", {"query": "daughter", "thread": thread})
        assert result.is_error
        assert "no conversation thread" in " ".join(getattr(p, "text", "") for p in result.content)


def test_no_token_no_memory(server: DevServer) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    answer = httpx2.post(f"{server.url}/memories/mcp", json=hello,
                         headers={"Accept": "application/json, text/event-stream"})  # fmt: skip
    assert answer.status_code in (401, 403)


def test_the_endpoint_is_absent_unless_turned_on(tmp_path: Path) -> None:
    from webapp.app import server_app

    paths = {getattr(route, "path", "") for route in server_app().routes}
    assert "/memories/mcp" not in paths
