"""LocalSession: the graph in one process — SQLite threads, the durable local write queue."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graph.agent import compile_graph
from graph.context import Context
from graph.lineage import alineage_of
from graph.memory_access import open_manager, register_local_writer, unregister_local_writer
from graph.writer import writer_consumer
from memory.branch import Lineage
from memory.long_term import LongTermMemory
from memory.manager import BaseMemoryManager
from memory.writer.staging import ToolEvent


@dataclasses.dataclass
class TurnReply:
    """What one turn produced: the assistant's text and the memories it was given."""

    text: str
    related_memories: list[dict[str, Any]]


class LocalSession:
    """The chat graph in this process: `async with LocalSession(ctx, dir) as s: await s.say(...)`.

    Threads are kept in `<data_dir>/threads.sqlite`; finished turns go to the local write queue
    (journal `<data_dir>/write-journal.sqlite`), which keeps them across a crash.
    """

    def __init__(
        self,
        context: Context,
        data_dir: str | Path,
        on_memory_event: Callable[[ToolEvent], Any] | None = None,
    ) -> None:
        self.context = dataclasses.replace(context, write_mode="local")
        self.data_dir = Path(data_dir)
        self.on_memory_event = on_memory_event
        self.manager: BaseMemoryManager | None = None
        self.memory: LongTermMemory | None = None
        self._stack = contextlib.AsyncExitStack()
        self._graph: Any = None

    async def __aenter__(self) -> LocalSession:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        saver = await self._stack.enter_async_context(
            AsyncSqliteSaver.from_conn_string(str(self.data_dir / "threads.sqlite"))
        )
        self._graph = compile_graph(checkpointer=saver)
        self.manager = await asyncio.to_thread(
            open_manager, self.context, self.context.user_id, None
        )
        self.memory = LongTermMemory(
            self.manager,
            # The same consumer (model, language policy) as the server and inline modes.
            consumer=writer_consumer(self.context),
            journal_path=self.data_dir / "write-journal.sqlite",
            on_event=self.on_memory_event,
        )
        self.memory.start()
        register_local_writer(self.context.user_id, self.memory)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        unregister_local_writer(self.context.user_id)
        if self.memory is not None:
            await self.memory.stop()  # drains: every queued turn is written before we exit
        await self._stack.aclose()

    async def say(self, thread_id: str, text: str, checkpoint_id: str | None = None) -> TurnReply:
        """One user message on `thread_id`; returns the reply (memory is written afterwards).

        With `checkpoint_id` the message follows that earlier checkpoint of the thread instead
        of its latest one: a fork, which does not see the branch memories of its siblings.
        """
        configurable = {"thread_id": thread_id}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        state = await self._graph.ainvoke(
            {"messages": [{"role": "user", "content": text}]},
            {"configurable": configurable},
            context=self.context,
        )
        last = state["messages"][-1]
        reply = last.text if isinstance(last, AIMessage) else str(last.content)
        return TurnReply(reply, list(state.get("related_memories", [])))

    async def latest_checkpoint_id(self, thread_id: str) -> str:
        """The checkpoint the thread's last turn ended at (to fork from it later); "" for a
        thread with no turn yet."""
        state = await self._graph.aget_state({"configurable": {"thread_id": thread_id}})
        return str((state.config.get("configurable") or {}).get("checkpoint_id") or "")

    async def lineage_at(self, thread_id: str, checkpoint_id: str) -> Lineage:
        """What a turn continuing from `checkpoint_id` may read: its ancestor checkpoints
        (none for a thread with no turn yet, which sees only user memories)."""
        if not checkpoint_id:
            return Lineage(thread_id, frozenset())
        return await alineage_of(self._graph.checkpointer, thread_id, checkpoint_id)

    async def wait_for_writes(self, timeout_seconds: float = 60.0) -> None:
        """Wait until the write queue has nothing pending (TimeoutError after the timeout)."""
        assert self.memory is not None
        deadline = time.monotonic() + timeout_seconds
        while (await asyncio.to_thread(self.memory.write_status)).pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"memory writes still pending after {timeout_seconds:g} s")
            await asyncio.sleep(0.05)
