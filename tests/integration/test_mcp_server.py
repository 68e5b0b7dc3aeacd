"""The MCP server as an MCP client meets it: the SDK's own client over stdio and over HTTP,
against `python -m webapp.mcp` in a real process on real YAML files, the offline model writing.

A chat through LocalSession first leaves a conversation (and its archive) in the same folder, so
the tools are checked against what the chat itself stored and said.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from graph.cli.session import LocalSession
from graph.context import Context
from memory.integration.settings import Settings
from memory.registry import registry
from tests.e2e.server import free_port

pytestmark = pytest.mark.slow

PROJECT = Path(__file__).resolve().parents[2]
FACT = "My daughter's name is Mia"


def server_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment of a server process on this test's settings (YAML, offline model)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
    env.update(
        GULFSTREAM_MEMORY_BACKEND=settings.memory_backend,
        GULFSTREAM_DATA_DIR=settings.data_dir,
        GULFSTREAM_SNAPSHOT_SECONDS="off",
        **extra,
    )
    return env


def stdio(settings: Settings, user: str, threads: Path | None = None) -> Client:
    args = ["-m", "webapp.mcp", "--user", user]
    args += ["--threads", str(threads)] if threads is not None else []
    params = StdioServerParameters(
        command=sys.executable, args=args, env=server_env(settings), cwd=str(PROJECT)
    )
    return Client(params, read_timeout_seconds=120)


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool's structured answer; the test fails with the server's message on an error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The error message a refused call gets."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return " ".join(getattr(part, "text", "") for part in result.content)


def descriptions(found: dict[str, Any]) -> list[str]:
    return [memory["description"] for memory in found["memories"]]


async def test_remember_search_update_forget_over_stdio(clean_process: Settings) -> None:
    async with stdio(clean_process, "alice") as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert tools >= {"search_memories", "remember", "update_memory", "forget_memory",
                         "list_memories", "show_memory"}  # fmt: skip
        assert "search_conversations" in tools  # feature: archive
        written = await call(client, "remember", fact=FACT)
        assert written["status"] == "written"
        [added] = written["changes"]
        assert added["op"] == "add" and "Mia" in added["description"]
        found = await call(client, "search_memories", query="daughter name")
        assert [m["id"] for m in found["memories"]][:1] == [added["id"]]

        again = await call(client, "remember", fact=FACT)  # the writer's dedup: no second copy
        assert again["status"] in ("unchanged", "skipped", "written")
        assert [d for d in descriptions(await call(client, "list_memories")) if "Mia" in d] == [
            added["description"]
        ]

        edited = await call(client, "update_memory", id=added["id"],
                            description="User's daughter is called Mia Rose")  # fmt: skip
        assert edited["description"] == "User's daughter is called Mia Rose"
        shown = await call(client, "show_memory", id=added["id"])
        assert [entry["action"] for entry in shown["history"]][:2] == ["update", "create"]

        await call(client, "forget_memory", id=added["id"])
        assert descriptions(await call(client, "search_memories", query="daughter Mia")) == []
        assert (await call(client, "list_memories"))["total"] == 0
    # What the user's next chat reads: the same YAML file, in this process.
    registry.clear()
    memory = registry.open(clean_process.memory_backend, "alice", None,
                           default_data_dir=clean_process.data_dir)  # fmt: skip
    assert memory.manager.list_items() == {}
    assert (
        memory.manager.deleted_items()[added["id"]].description
        == "User's daughter is called Mia Rose"
    )


async def test_bad_input_gets_a_clear_error_and_changes_nothing(clean_process: Settings) -> None:
    async with stdio(clean_process, "alice") as client:
        written = await call(client, "remember", fact=FACT)
        [added] = written["changes"]
        store = next(Path(clean_process.memory_backend.split(":", 1)[1]).rglob("*.yaml"))
        before = store.read_bytes()
        assert "empty" in await refused(client, "search_memories", query="   ")
        assert "between 1 and 100" in await refused(client, "search_memories", query="x", limit=0)
        assert "no live memory" in await refused(client, "forget_memory", id="nope")
        assert "no live memory" in await refused(client, "show_memory", id="nope")
        assert "description" in await refused(client, "update_memory", id=added["id"],
                                               description="")  # fmt: skip
        assert "empty" in await refused(client, "remember", fact="")
        assert "at most 1000 characters" in await refused(client, "remember", fact="a " * 600)
        bad_day = await refused(client, "search_conversations", since="x")  # feature: archive
        assert "YYYY-MM-DD" in bad_day  # feature: archive
        assert "no conversation thread" in await refused(
            client, "search_memories", query="daughter", thread="no-such-thread"
        )
        assert store.read_bytes() == before


async def test_stdio_serves_only_the_user_it_was_started_for(clean_process: Settings) -> None:
    async with stdio(clean_process, "alice") as client:
        await call(client, "remember", fact=FACT)
    async with stdio(clean_process, "bob") as client:
        assert descriptions(await call(client, "search_memories", query="daughter Mia")) == []
        assert (await call(client, "list_memories"))["total"] == 0
        # No tool takes a user: an argument naming one is refused, never followed.
        result = await client.call_tool("search_memories", {"query": "Mia", "user_id": "alice"})
        text = " ".join(getattr(part, "text", "") for part in result.content)
        assert result.is_error or "Mia" not in text


def test_stdout_carries_nothing_but_the_protocol(clean_process: Settings) -> None:
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "webapp.mcp", "--user", "alice"],
        input=json.dumps(hello) + "\n", capture_output=True, text=True, timeout=120,
        cwd=PROJECT, env=server_env(clean_process),
    )  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, done.stderr
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in lines)
    assert json.loads(lines[0])["result"]["serverInfo"]["name"] == "gulfstream-memory"


@pytest.mark.uses("archive")
async def test_a_chat_thread_and_its_conversations_are_searchable(
    clean_process: Settings, tmp_path: Path
) -> None:
    chat_dir = tmp_path / "chat"
    context = Context(user_id="alice", model="offline/rules", writer_model="offline/rules")
    async with LocalSession(context, chat_dir) as session:
        await session.say("kitchen", "My favourite fruit is mango")
        await session.wait_for_writes()
    registry.clear()
    async with stdio(clean_process, "alice", chat_dir / "threads.sqlite") as client:
        in_thread = await call(client, "search_memories", query="favourite fruit", thread="kitchen")
        assert any("mango" in d for d in descriptions(in_thread))
        said = await call(client, "search_conversations", query="mango")
        texts = [m["content"] for hit in said["hits"] for m in hit.get("messages", [])]
        assert any("My favourite fruit is mango" in text for text in texts)
        assert {hit["thread_id"] for hit in said["hits"] if "thread_id" in hit} == {"kitchen"}
        [fruit] = [m for m in (await call(client, "list_memories"))["memories"]
                   if "mango" in m["description"]]  # fmt: skip
        await call(client, "forget_memory", id=fruit["id"])
        # Forgotten everywhere the agent looks: the archive hides the message that carried it.
        after = await call(client, "search_conversations", query="mango")
        assert not any(
            "mango" in m["content"] for h in after["hits"] for m in h.get("messages", [])
        )
    async with stdio(clean_process, "bob", chat_dir / "threads.sqlite") as client:
        said = await call(client, "search_conversations", query="mango")
        assert said["hits"] == []


@contextmanager
def http_server(settings: Settings, **env: str) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "webapp.mcp", "--http", "--port", str(port)],
        cwd=PROJECT, env=server_env(settings, **env),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/memories/mcp"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(url, timeout=1)
                break
            except urllib.error.HTTPError:
                break  # it answers (a GET is not an MCP call)
            except OSError:
                assert process.poll() is None, process.stderr.read() if process.stderr else ""
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


@asynccontextmanager
async def http_client(url: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def test_http_acts_for_the_caller_never_for_an_argument(clean_process: Settings) -> None:
    with http_server(clean_process) as url:
        async with http_client(url, {"X-Gulfstream-User": "alice"}) as alice:
            written = await call(alice, "remember", fact=FACT)
            assert written["status"] == "written"
            assert descriptions(await call(alice, "search_memories", query="daughter"))
        async with http_client(url, {"X-Gulfstream-User": "bob"}) as bob:
            assert descriptions(await call(bob, "search_memories", query="daughter Mia")) == []
            assert (await call(bob, "list_memories"))["total"] == 0
            [mia] = written["changes"]
            assert "no live memory" in await refused(bob, "show_memory", id=mia["id"])
            assert "no live memory" in await refused(bob, "forget_memory", id=mia["id"])
        async with http_client(url, {"X-Gulfstream-User": "alice"}) as alice:
            assert (await call(alice, "list_memories"))["total"] == 1
        # A page on another site cannot call it from the user's browser.
        answer = httpx2.post(url, json={}, headers={"Origin": "https://evil.example"})
        assert answer.status_code == 403


def test_http_refuses_a_caller_without_a_user_when_auth_is_required(
    clean_process: Settings,
) -> None:
    with http_server(clean_process, GULFSTREAM_EDITOR_REQUIRE_AUTH="1") as url:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        answer = httpx2.post(url, json=hello, headers={"X-Gulfstream-User": "alice",
                             "Accept": "application/json, text/event-stream"})  # fmt: skip
        assert answer.status_code == 401
        assert "sign in" in answer.json()["error"]


async def test_the_core_context_tells_a_private_thread_from_another(
    clean_process: Settings,
) -> None:
    registry.clear()
    memory = registry.open(clean_process.memory_backend, "carol", None,
                           default_data_dir=clean_process.data_dir)  # fmt: skip
    memory.manager.seed_core_context(human="User is Carol")
    memory.manager.mark_private("secret-thread")  # what ltm_write notes of a private thread
    async with stdio(clean_process, "carol") as client:
        private = await client.read_resource("memory://core-context?thread=secret-thread")
        other = await client.read_resource("memory://core-context?thread=open-thread")
    shown = [json.loads(getattr(r.contents[0], "text", "{}")) for r in (private, other)]
    assert shown[0]["private"] == "1" and shown[0]["human"] == "User is Carol"
    assert "private" not in shown[1]
