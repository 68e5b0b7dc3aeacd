"""Under `langgraph dev` with the `store` backend the editor works on what the agent wrote."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from tests.webapp.editor_process import read_events
from tests.webapp.langgraph_server import run_langgraph_dev

pytestmark = pytest.mark.slow

# The agent's write path, minus the LLM: the memory agent (MemoryConsumer) with a scripted model,
# on the memory the graphs open — registry.open(settings.memory_backend, user, runtime.store, ...),
# the call memory/integration/run_memory.py makes — for the authenticated user. It answers with
# what it then
# reads.
WRITER_GRAPH = '''
"""A stand-in agent whose memory writer goes through the server's store, as
memory/integration/writing/writer_graph.py does."""
import asyncio
from typing import Any, TypedDict

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memory.integration.settings import get_settings
from memory.registry import registry
from memory.writer.turn import Turn
from memory.writer.consumer import MemoryConsumer


class ScriptedModel(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedModel":
        return self


class State(TypedDict, total=False):
    facts: list[str]
    memories: list[str]


def open_memory(user_id: str, store: Any) -> Any:
    settings = get_settings()
    return registry.open(
        settings.memory_backend, user_id, store,
        default_data_dir=settings.data_dir, snapshot_delay=settings.snapshot_seconds,
    )


async def remember(state: State, runtime: Runtime) -> State:
    user_id = get_config()["configurable"]["langgraph_auth_user_id"]
    memory = await asyncio.to_thread(open_memory, user_id, runtime.store)
    facts = state.get("facts") or []
    if facts:
        calls = [
            {"name": "create_memory", "args": {"content": fact, "section": "tea"},
             "id": f"call-{i}", "type": "tool_call"}
            for i, fact in enumerate(facts)
        ]
        model = ScriptedModel(messages=iter([AIMessage("", tool_calls=calls), AIMessage("ok")]))
        turn = Turn.of(user_id, [{"role": "user", "content": " ".join(facts)},
                                 {"role": "assistant", "content": "Noted."}])
        await MemoryConsumer(model).consume(turn, memory)
    shown = await asyncio.to_thread(memory.manager.show)
    return {"memories": sorted(m["description"] for m in shown)}


builder = StateGraph(State).add_node("remember", remember)
graph = builder.add_edge(START, "remember").add_edge("remember", END).compile()
'''


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_langgraph_dev(
        tmp_path_factory.mktemp("store-app"),
        {"writer_graph.py": WRITER_GRAPH},
        {"writer": "./writer_graph.py:graph"},
        GULFSTREAM_MEMORY_BACKEND="store",
    ) as base:
        yield base


class User:
    """One authenticated user: the agent (runs over the SDK) and the editor (its JSON API)."""

    def __init__(self, base: str, token: str) -> None:
        self.headers = {"Authorization": f"Bearer {token}"}
        self.sdk = get_sync_client(url=base, headers=self.headers)
        self.editor = httpx.Client(
            base_url=f"{base}/memories/api/",
            headers={**self.headers, "Content-Type": "application/json", "X-Gulfstream-CSRF": "1"},
            timeout=20,
        )

    def agent_run(self, *facts: str) -> list[str]:
        """Run the agent (writing `facts` as memories); what the agent then reads from memory."""
        run_input: dict[str, Any] = {"facts": list(facts)}
        result = self.sdk.runs.wait(None, "writer", input=run_input)
        assert isinstance(result, dict), result
        return list(result["memories"])

    def cards(self, **params: str) -> dict[str, str]:
        listing = self.editor.get("memories", params=params)
        assert listing.status_code == 200, listing.text
        return {c["description"]: c["id"] for g in listing.json()["groups"] for c in g["cards"]}


@pytest.fixture(scope="module")
def alice(server: str) -> User:
    return User(server, "token-alice")


def test_the_editor_lists_and_searches_what_the_agent_wrote(server: str, alice: User) -> None:
    written = alice.agent_run("Alice drinks jasmine tea.", "Alice brews pu'er on Sundays.")
    assert written == ["Alice brews pu'er on Sundays.", "Alice drinks jasmine tea."]
    assert sorted(alice.cards()) == written
    who = alice.editor.get("whoami").json()
    assert isinstance(who.pop("features"), dict)  # what the page shows: test_features_off.py
    assert who == {
        "user_id": "alice",
        "auth_mode": "auth",
        "backend": "store",
    }
    assert next(iter(alice.cards(q="jasmine"))) == "Alice drinks jasmine tea."
    # Same namespace and item dicts as memory/store/backends/langgraph_store.py: ("memories", user),
    # id → item.
    memory_id = alice.cards()["Alice drinks jasmine tea."]
    stored = alice.sdk.store.get_item(("memories", "alice"), memory_id)
    assert stored["value"]["description"] == "Alice drinks jasmine tea."
    # Bob, even claiming to be Alice in the local-mode header, sees none of it.
    bob = User(server, "token-bob")
    bob.editor.headers["X-Gulfstream-User"] = "alice"
    assert bob.cards() == {} and bob.editor.get(f"memories/{memory_id}").status_code == 404


def test_an_edit_in_the_editor_keeps_history_and_the_agent_reads_it(alice: User) -> None:
    memory_id = alice.cards()["Alice drinks jasmine tea."]
    edited = alice.editor.patch(
        f"memories/{memory_id}",
        json={"description": "Alice drinks green jasmine tea.", "reason": "more precise"},
    )
    assert edited.status_code == 200, edited.text
    latest = edited.json()["history"][0]
    assert (latest["action"], latest["reason"]) == ("update", "more precise")
    assert latest["previous_description"] == "Alice drinks jasmine tea."
    assert "Alice drinks green jasmine tea." in alice.agent_run()


def test_delete_and_undo_reach_the_agent(alice: User) -> None:
    memory_id = alice.cards()["Alice brews pu'er on Sundays."]
    deleted = alice.editor.request("DELETE", f"memories/{memory_id}", json={"reason": "wrong"})
    assert deleted.status_code == 200, deleted.text
    assert "Alice brews pu'er on Sundays." not in alice.agent_run()
    tombstones = alice.editor.get("deleted").json()["items"]
    assert [(t["id"], t["deleted_reason"]) for t in tombstones] == [(memory_id, "wrong")]
    assert alice.editor.post(f"memories/{memory_id}/restore", json={}).status_code == 200
    assert "Alice brews pu'er on Sundays." in alice.agent_run()
    actions = [e["action"] for e in alice.editor.get(f"memories/{memory_id}").json()["history"]]
    assert actions == ["restore", "delete", "create"]


def test_the_live_stream_shows_the_agents_write(alice: User) -> None:
    with alice.editor.stream("GET", "events") as stream:
        lines = stream.iter_lines()
        assert next(lines) == "retry: 2000"
        alice.agent_run("Alice keeps a tea diary.")
        # The writer's trace rows may reach the stream a poll before the store's revision does
        # (a change with the rows and no items): read on until the items arrive.
        change = next(e for e in read_events(lines, "change") if e["changes"])
    assert [(c["action"], c["description"]) for c in change["changes"]] == [
        ("create", "Alice keeps a tea diary.")
    ]
