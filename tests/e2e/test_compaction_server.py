"""End to end under `langgraph dev`: a thread over its prompt budget is compacted, and the turns
waiting in the store for their batch are written by the flush that comes first."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest
from langgraph_sdk import get_client

from memory.store.backends.langgraph_store import ITEMS_NAMESPACE, namespace_label
from tests.e2e.server import DevServer, copy_app, running_server, stub_model_env
from tests.e2e.stub_openai import StubOpenAI

pytestmark = pytest.mark.slow

FLUSH_SECONDS = 60


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    app = copy_app(tmp_path_factory.mktemp("gulfstream-compaction") / "app")
    with StubOpenAI() as stub:
        env = {
            **stub_model_env(stub),
            "GULFSTREAM_MEMORY_BACKEND": "store",
            "GULFSTREAM_CONTEXT_BUDGET_TOKENS": "900",
            # Batches wait an hour: only the flush before compaction writes them sooner.
            "GULFSTREAM_WRITE_BATCH_SECONDS": "3600",
            "GULFSTREAM_EMBEDDINGS": "off",
        }
        with running_server(app, env) as dev:
            yield dev


async def test_compaction_flushes_the_turns_waiting_in_the_store(server: DevServer) -> None:
    client = get_client(url=server.url)
    thread = (await client.threads.create())["thread_id"]
    said = ["My cat is called Pixel and she is three years old."] + [
        f"Turn {i}: the weather report says light rain, about {i} millimetres this afternoon."
        for i in range(2, 40)
    ]
    compacted = None
    for text in said:
        state = await client.runs.wait(
            thread, "agent", input={"messages": [{"role": "user", "content": text}]},
            context={"user_id": "erin"},
        )  # fmt: skip
        assert isinstance(state, dict) and state["messages"][-1]["type"] == "ai", state
        if state.get("compaction", {}).get("status") == "compacted":
            compacted = state
            break
    assert compacted is not None, "the thread was never compacted"
    assert compacted["summary"]["messages"] > 0
    assert compacted["memory_write"]["status"] == "scheduled"
    namespace = (ITEMS_NAMESPACE, namespace_label("erin"))
    deadline = time.monotonic() + FLUSH_SECONDS
    while True:
        items = (await client.store.search_items(namespace, limit=100))["items"]
        if any("Pixel" in str(item["value"]) for item in items):
            break
        assert time.monotonic() < deadline, server.log()[-4000:]
        await asyncio.sleep(0.5)
    # The compacted turns are still found in the archive.
    found = await client.runs.wait(
        thread, "agent", input={"messages": [{"role": "user", "content":
                                              "search the archive for Pixel"}]},
        context={"user_id": "erin"},
    )  # fmt: skip
    assert "Pixel" in found["messages"][-1]["content"]
