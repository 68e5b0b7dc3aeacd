"""One replica as a user reaches it: chat turns over the SDK, the editor's JSON API, a SIGKILL."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_client

from tests.e2e.server import DevServer
from tests.e2e.stub_openai import StubOpenAI

IDLE_SECONDS = 90.0  # the longest a replica's writer runs may take to drain


class Replica:
    """`langgraph dev` process `name`, its data folder, and one user's clients for it."""

    def __init__(
        self, name: str, dev: DevServer, data_dir: Path, user_id: str, stub: StubOpenAI
    ) -> None:
        self.name, self.dev, self.data_dir, self.user_id, self.stub = (
            name, dev, data_dir, user_id, stub,
        )  # fmt: skip
        self.sdk = get_client(url=dev.url)

    def editor(self) -> httpx.AsyncClient:
        """The editor's API as the local user (no auth configured), with its CSRF header."""
        return httpx.AsyncClient(
            base_url=f"{self.dev.url}/memories/api/",
            headers={"X-Gulfstream-User": self.user_id, "X-Gulfstream-CSRF": "1"},
            timeout=60,
        )

    async def say(self, text: str, user_id: str | None = None) -> dict[str, Any]:
        """One turn of the lane's user (or `user_id`) in a new thread: the in-memory runtime
        keeps threads per process, so a user served by two replicas meets a new thread on
        each; memory is what they share."""
        thread = (await self.sdk.threads.create())["thread_id"]
        state = await self.sdk.runs.wait(
            thread,
            "agent",
            input={"messages": [{"role": "user", "content": text}]},
            context={"user_id": user_id or self.user_id},
        )
        assert isinstance(state, dict) and "messages" in state, (self.name, state)
        return state

    async def wait_idle(self, seconds: float = IDLE_SECONDS) -> None:
        """Until no thread of this replica is busy (its memory_writer runs have finished),
        seen twice in a row: a chat run queues its writer run before it returns."""
        deadline, quiet = time.monotonic() + seconds, 0
        while quiet < 2:
            busy = await self.sdk.threads.search(status="busy", limit=10)
            quiet = 0 if busy else quiet + 1
            assert time.monotonic() < deadline, f"{self.name} still busy:\n{self.log_tail()}"
            await asyncio.sleep(0.5)

    def kill(self) -> None:
        """SIGKILL the server's whole process group: no shutdown, no flush, as a lost node."""
        os.killpg(self.dev.process.pid, signal.SIGKILL)
        self.dev.process.wait(timeout=10)

    def log_tail(self) -> str:
        return self.dev.log()[-4000:]


def remembered(state: dict[str, Any]) -> list[str]:
    return [memory["description"] for memory in state.get("related_memories") or []]
