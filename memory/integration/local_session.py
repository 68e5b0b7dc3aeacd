"""LocalSession: an app's chat graph in one process, threads in SQLite, turns to the local queue."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeAlias

from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from memory.integration.chat_commands import MemoryCommands
from memory.integration.context import MemoryContext
from memory.integration.lineage import alineage_of, lineage_of
from memory.integration.models.embeddings import deployment_embeddings
from memory.integration.run_memory import writer_consumer
from memory.integration.settings import get_settings
from memory.long_term import LongTermMemory
from memory.registry import open_memory
from memory.store.branch import Lineage
from memory.writer.local import local_writer
from memory.writer.staging import ToolEvent

logger = logging.getLogger(__name__)

EXIT_WAIT_SECONDS = 60.0


@dataclasses.dataclass
class TurnReply:
    """What one turn produced: the reply, the memories it was given (and what it was given of
    the user's turns not filed yet), its memory write, and its model calls by purpose."""

    text: str
    related_memories: list[dict[str, Any]]
    memory_write: dict[str, Any] = dataclasses.field(default_factory=dict)
    cost: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    said_recently: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # The ids of the memories the reply was given (its message's `memory_ids`), and whether
    # the conversation is off the record.
    memory_ids: list[str] = dataclasses.field(default_factory=list)
    private: bool = False


class LocalSession:
    """A chat graph in this process: `async with LocalSession(ctx, dir) as s: await s.say(...)`.

    An app subclasses it with its graph: `compile_graph(checkpointer=...)` builds the chat graph
    (a graph whose last node is `ltm_write`). Threads are kept in `<data_dir>/threads.sqlite`.
    Finished turns go to this process's durable queue (`memory.writer.local`), whose journal
    lives beside the memory store; leaving the session waits until this user's queued turns are
    written.
    """

    compile_graph: Callable[..., Any]
    Event: TypeAlias = ToolEvent  # what `on_memory_event` is called with

    def __init__(
        self,
        context: MemoryContext,
        data_dir: str | Path,
        on_memory_event: Callable[[ToolEvent], Any] | None = None,
    ) -> None:
        self.context = context
        self.data_dir = Path(data_dir)
        self.on_memory_event = on_memory_event
        self.memory: LongTermMemory | None = None
        self._stack = contextlib.AsyncExitStack()
        self._graph: Any = None
        # How long leaving the session waits for this user's queued turns (Ctrl-C ends it too).
        self.exit_wait_seconds = EXIT_WAIT_SECONDS

    @property
    def manager(self) -> Any:
        assert self.memory is not None, "use LocalSession in `async with`"
        return self.memory.manager

    def commands(self) -> MemoryCommands:
        """The session's memory commands (/memories, /forget, /search, …) on its memory."""
        assert self.memory is not None, "use LocalSession in `async with`"
        return MemoryCommands(self.memory)

    @staticmethod
    def thread_lineage(threads_file: Path, thread_id: str) -> Lineage:
        """The branch a new turn at the end of `thread_id` continues, in a session's
        `threads.sqlite` (read by another process: MCP's `remember` beside `make chat`);
        LookupError naming the file or thread when there is none."""
        from langgraph.checkpoint.sqlite import SqliteSaver

        if not threads_file.is_file():
            raise LookupError(
                f"no conversation thread {thread_id!r}: {threads_file} does not exist"
            )
        with SqliteSaver.from_conn_string(str(threads_file)) as saver:
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
            latest = saver.get_tuple(config)  # type: ignore[arg-type]
            if latest is None:
                raise LookupError(f"no conversation thread {thread_id!r} in {threads_file}")
            checkpoint_id = str(latest.config["configurable"]["checkpoint_id"])
            return lineage_of(saver, thread_id, checkpoint_id)

    async def __aenter__(self) -> LocalSession:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        saver = await self._stack.enter_async_context(
            AsyncSqliteSaver.from_conn_string(str(self.data_dir / "threads.sqlite"))
        )
        self._graph = self.compile_graph(checkpointer=saver)
        settings = get_settings()
        self.memory = await asyncio.to_thread(
            open_memory,
            settings.memory_backend,
            self.context.user_id,
            default_data_dir=settings.data_dir,
            snapshot_delay=settings.snapshot_seconds,
            consumer=writer_consumer(),
            embeddings=deployment_embeddings(),
            shared_database=settings.shared_database,
        )
        if self.on_memory_event is not None:
            self.memory.add_listener(self.on_memory_event)
        # Start the queue now: turns an earlier session left in the journal are written first.
        await asyncio.wrap_future(local_writer.start(self.memory))
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            if self.memory is not None:
                try:
                    await self.wait_for_writes(timeout_seconds=self.exit_wait_seconds)
                except TimeoutError:  # a stalled writer: the turns stay in the journal
                    logger.warning(
                        "memory writes still running after %g s; the turns left stay in the "
                        "journal and are written at the next start",
                        self.exit_wait_seconds,
                    )
        finally:
            if self.memory is not None and self.on_memory_event is not None:
                self.memory.remove_listener(self.on_memory_event)
            await self._stack.aclose()

    async def say(
        self,
        thread_id: str,
        text: str,
        checkpoint_id: str | None = None,
        on_text: Callable[[str, str], Any] | None = None,
    ) -> TurnReply:
        """One user message on `thread_id`; returns the reply (memory is written afterwards).

        With `checkpoint_id` the message follows that earlier checkpoint of the thread instead
        of its latest one: a fork, which does not see the branch memories of its siblings.
        `on_text(message_id, piece)` is called with each piece of the chat model's text as it
        arrives (graph/cli/streaming.py decides what of it a user sees).
        """
        configurable = {"thread_id": thread_id}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        turn = {"messages": [{"role": "user", "content": text}]}
        config = {"configurable": configurable}
        if on_text is None:
            state = await self._graph.ainvoke(turn, config, context=self.context)
        else:
            state = await self._streamed(turn, config, on_text)
        last = state["messages"][-1]
        reply = last.text if isinstance(last, AIMessage) else str(last.content)
        related = list(state.get("related_memories", []))
        write, cost = dict(state.get("memory_write") or {}), dict(state.get("cost") or {})
        said = list(state.get("said_recently", []))
        sources = list(last.response_metadata.get("memory_ids") or [])
        private = bool(state.get("private"))
        return TurnReply(reply, related, write, cost, said, sources, private)

    async def _streamed(
        self, turn: dict[str, Any], config: dict[str, Any], on_text: Callable[[str, str], Any]
    ) -> dict[str, Any]:
        # Only the agent node's model speaks to the user: the retriever's, the summariser's and
        # the writer's calls stream too, under their own node names.
        state: dict[str, Any] = {}
        async for mode, payload in self._graph.astream(
            turn, config, context=self.context, stream_mode=["messages", "values"]
        ):
            if mode == "values":
                state = payload
                continue
            chunk, metadata = payload
            if metadata.get("langgraph_node") == "agent" and isinstance(chunk, AIMessageChunk):
                piece = chunk.content if isinstance(chunk.content, str) else chunk.text
                on_text(str(chunk.id or ""), piece)
        return state

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

    async def wait_for_writes(self, timeout_seconds: float | None = 60.0) -> None:
        """Wait until this user's queued turns are written (TimeoutError after the timeout)."""
        assert self.memory is not None
        started = time.monotonic()
        drained = asyncio.wrap_future(local_writer.drain(self.memory))
        try:
            await asyncio.wait_for(drained, timeout_seconds)
        except TimeoutError:
            waited = time.monotonic() - started
            raise TimeoutError(f"memory writes still pending after {waited:.0f} s") from None
