"""Reminders on LangGraph's own scheduler, through a real `langgraph dev`: the user asks to be
reminded in a minute, the chat model calls `set_reminder`, the reminder is a cron of the user's
thread, and at its minute the server runs it and the reminder lands in that thread. Listing and
cancelling go through the same tools."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from tests.e2e.server import DevServer, copy_app, running_server, stub_model_env
from tests.e2e.stub_openai import StubOpenAI, scripted_reply

pytestmark = pytest.mark.slow

# A cron fires on a whole minute, and the server's scheduler looks every few seconds.
DUE_WITHIN_SECONDS = 150


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content)


def reminding_model(request: dict[str, Any]) -> dict[str, Any]:
    """A chat model that calls the reminder tools the user's words name ("remind me to X in a
    minute", "list my reminders", "cancel reminder ID"), then says what the tool answered."""
    messages = request.get("messages", [])
    tools = {t["function"]["name"] for t in request.get("tools") or []}
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    asked = _text(messages[last_user]) if last_user >= 0 else ""
    answered = [_text(m) for m in messages[last_user:] if m.get("role") == "tool"]
    if "set_reminder" not in tools or "create_memory" in tools:
        return scripted_reply(request)
    if answered:
        return {"role": "assistant", "content": f"STUB: {answered[-1]}"}
    if asked.startswith("Remind me to "):
        what, when = asked.removeprefix("Remind me to ").rsplit(" in ", 1)
        name, arguments = "set_reminder", {"what": what, "when": f"in {when}"}
    elif asked == "list my reminders":
        name, arguments = "list_reminders", {}
    elif asked.startswith("cancel reminder "):
        name, arguments = "cancel_reminder", {"reminder_id": asked.rsplit(" ", 1)[1]}
    else:
        return scripted_reply(request)
    call = {"id": f"call_{uuid.uuid4().hex[:10]}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream") / "app")
    with StubOpenAI(script=reminding_model) as stub:
        env = {**stub_model_env(stub), "GULFSTREAM_MEMORY_BACKEND": "store"}
        with running_server(app, env) as dev:
            yield dev


async def _say(client: Any, thread_id: str, text: str) -> str:
    state = await client.runs.wait(
        thread_id, "agent", input={"messages": [{"role": "user", "content": text}]},
        context={"user_id": "alice", "timezone": "Asia/Shanghai"},
    )  # fmt: skip
    return _text(state["messages"][-1])


async def test_a_reminder_set_in_chat_comes_in_its_thread_at_its_time(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    reply = await _say(client, thread_id, "Remind me to call my mom in 1 minute")
    assert "Reminder set for" in reply, reply
    crons = await client.crons.search(thread_id=thread_id)
    # The cron brings the reminder's id; what to say stays in the user's memory.
    reminder_id = reply.split("(id ", 1)[1].split(")", 1)[0]
    assert len(crons) == 1 and crons[0]["metadata"]["gulfstream_reminder"] == reminder_id
    assert "call my mom" not in json.dumps(crons[0])
    assert "call my mom" in await _say(client, thread_id, "list my reminders")

    deadline = time.monotonic() + DUE_WITHIN_SECONDS
    said: list[str] = []
    while time.monotonic() < deadline and not said:
        await asyncio.sleep(3)
        state = await client.threads.get_state(thread_id)
        said = [_text(m) for m in state["values"]["messages"] if "⏰" in _text(m)]
    assert said == ["⏰ Reminder: call my mom"], server.log()[-3000:]
    assert await client.crons.search(thread_id=thread_id) == []  # it came once, and is gone


async def test_a_cancelled_reminder_never_comes(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    reply = await _say(client, thread_id, "Remind me to water the plants in 1 minute")
    reminder_id = reply.split("(id ", 1)[1].split(")", 1)[0]
    assert "Cancelled" in await _say(client, thread_id, f"cancel reminder {reminder_id}")
    assert await client.crons.search(thread_id=thread_id) == []
    assert "No reminder" in await _say(client, thread_id, "list my reminders")


def _memories(page: Any) -> Iterator[dict[str, Any]]:
    """Every memory card in an editor listing, however it is grouped."""
    if isinstance(page, dict):
        if "id" in page and "description" in page:
            yield page
        for value in page.values():
            yield from _memories(value)
    elif isinstance(page, list):
        for value in page:
            yield from _memories(value)


@pytest.mark.uses("editor")
async def test_a_reminder_whose_memory_is_forgotten_in_the_editor_never_comes(
    server: DevServer,
) -> None:
    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    reply = await _say(client, thread_id, "Remind me to water the plants in 1 minute")
    assert "Reminder set for" in reply, reply
    alice = {"X-Gulfstream-User": "alice", "X-Gulfstream-CSRF": "1"}
    async with httpx.AsyncClient(base_url=server.url, headers=alice, timeout=30) as http:
        found: list[dict[str, Any]] = []
        for _ in range(240):  # the writer files the turn in the background
            page = await http.get("/memories/api/memories", params={"q": "water the plants"})
            found = [m for m in _memories(page.json()) if "water the plants" in m["description"]]
            if found:
                break
            await asyncio.sleep(0.5)
        assert found, page.text
        deleted = await http.request(
            "DELETE", f"/memories/api/memories/{found[0]['id']}", json={"reason": "forget it"}
        )
        assert deleted.status_code == 200, deleted.text
    assert "No reminder" in await _say(client, thread_id, "list my reminders")

    # Its minute comes: the cron runs, says nothing, and deletes itself.
    deadline = time.monotonic() + DUE_WITHIN_SECONDS
    while time.monotonic() < deadline and await client.crons.search(thread_id=thread_id):
        await asyncio.sleep(3)
    assert await client.crons.search(thread_id=thread_id) == [], server.log()[-3000:]
    state = await client.threads.get_state(thread_id)
    assert not [m for m in state["values"]["messages"] if "⏰" in _text(m)]


def test_reminders_off_means_no_tool(tmp_path: Path) -> None:
    from graph.agent import build
    from graph.tools import chat_tools
    from memory.integration import Settings

    off = Settings(reminders=False)
    assert "set_reminder" not in [tool.__name__ for tool in chat_tools(off)]
    # The node stays: a cron set before reminders were turned off comes, says nothing, and
    # drops the user's reminders (tests/integration/test_reminders_forgetting.py).
    assert "say_reminder" in build(off).nodes
