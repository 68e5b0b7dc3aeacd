"""LocalWriter: the in-process write sink, one event loop on a daemon thread running every
user's durable queue, shared by `make chat`, your own `compile_graph(...)` and the tests."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import threading
from collections.abc import Coroutine
from typing import Any, Protocol


class ServedMemory(Protocol):
    """What the writer's loop does with a user's memory (a `LongTermMemory`): start its queue,
    flush a thread's batch, stop it."""

    @property
    def writing(self) -> bool: ...
    def start(self) -> int: ...
    def flush(self, thread_id: str | None = None) -> int: ...
    async def join(self) -> None: ...
    async def stop(self, timeout: float | None = None) -> bool: ...


logger = logging.getLogger(__name__)

EXIT_DRAIN_SECONDS = 60.0  # at interpreter exit; what is left is replayed by the next start


class LocalWriter:
    """Each user's queue runs on this writer's own loop, so a queue outlives the caller's
    `asyncio.run` and sync `graph.invoke` can hand it turns too. It only lends its loop: a turn
    goes straight to the user's queue (`serve(memory, memory.send(turn))`), journaled when the
    returned future is done; the queue writes it afterwards."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._started: dict[int, ServedMemory] = {}

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="gulfstream-memory-writer", daemon=True
                ).start()
                # Before the thread pools shut down at exit (the writer needs them): threading's
                # exit hooks run before `atexit`'s.
                threading._register_atexit(self._drain_at_exit)  # type: ignore[attr-defined]
                self._loop = loop
            return self._loop

    def run(self, work: Coroutine[Any, Any, Any]) -> concurrent.futures.Future[Any]:
        """Run a coroutine on the writer's loop; `.result()` it from sync code or
        `asyncio.wrap_future` it from async code. It runs in a context of its own: a task
        inherits the context it is scheduled from, and a LangGraph run's context would make the
        memory agent a subgraph of the caller's run (its checkpointer, its streams)."""
        loop = self.loop()
        return contextvars.Context().run(asyncio.run_coroutine_threadsafe, work, loop)

    def start(self, memory: ServedMemory) -> concurrent.futures.Future[None]:
        """Start `memory`'s queue on the writer's loop (replaying what an earlier process left)
        and register it, so that `stop` and the drain at exit stop it with the others."""
        return self.run(self._start(memory))

    async def _start(self, memory: ServedMemory) -> None:
        if not memory.writing:
            memory.start()
        self._started[id(memory)] = memory

    def serve(
        self, memory: ServedMemory, work: Coroutine[Any, Any, Any]
    ) -> concurrent.futures.Future[Any]:
        """Start `memory`'s queue (registered, replaying what an earlier process left), then
        run `work` on the writer's loop: `serve(memory, memory.send(turn))` journals a turn,
        and the future is done once it is in the journal."""
        return self.run(self._serve(memory, work))

    async def _serve(self, memory: ServedMemory, work: Coroutine[Any, Any, Any]) -> Any:
        try:
            await self._start(memory)
        except BaseException:
            work.close()  # never started: no "was never awaited" warning
            raise
        return await work

    def flush(
        self, memory: ServedMemory, thread_id: str | None = None
    ) -> concurrent.futures.Future[int]:
        """Send `memory`'s waiting batches (of `thread_id`, or all) to the writer now, e.g.
        before a conversation is compacted; the future gives how many turns that was."""
        return self.run(self._flush(memory, thread_id))

    @staticmethod
    async def _flush(memory: ServedMemory, thread_id: str | None) -> int:
        return memory.flush(thread_id)

    def drain(self, memory: ServedMemory | None = None) -> concurrent.futures.Future[None]:
        """A future done when `memory`'s queue (every queue without one) has nothing left."""
        return self.run(self._drain(memory))

    async def _drain(self, memory: ServedMemory | None) -> None:
        for started in [memory] if memory is not None else list(self._started.values()):
            await started.join()

    def stop(self, timeout: float | None = None) -> bool:
        """Drain and stop every queue, waiting at most `timeout` seconds; False when turns were
        left (they stay journaled for the next start). A later turn starts a queue again."""
        if self._loop is None or not self._started:
            return True
        return bool(self.run(self._stop_all(timeout)).result())

    async def _stop_all(self, timeout: float | None) -> bool:
        started, self._started = list(self._started.values()), {}
        done = await asyncio.gather(*(memory.stop(timeout) for memory in started))
        return all(done)

    def _drain_at_exit(self) -> None:
        if not self._started:
            return
        logger.info("writing the queued memory turns before exit (up to %g s)", EXIT_DRAIN_SECONDS)
        try:
            if not self.stop(EXIT_DRAIN_SECONDS):
                logger.warning("memory turns still queued at exit stay in the journal")
        except KeyboardInterrupt:  # Ctrl-C ends the wait at once: the turns stay journaled
            logger.warning("interrupted: queued memory turns stay in the journal")
        except Exception:
            logger.exception("memory turns still queued at exit stay in the journal")


local_writer = LocalWriter()
