"""WriteTarget: what the memory writer is handed of one user's memory, and nothing more."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.retrieval import Retrievers
    from memory.store.manager import BaseMemoryManager
    from memory.writer.batching import BatchPolicy
    from memory.writer.staging import ToolEvent
    from memory.writer.trace import UsageLedger, WriteTrace

# Called after each applied writer run with the consumer's result (the deployment's
# consolidation trigger, for one); a hook that fails is logged.
WriteHook = Callable[[Any], Awaitable[None]]


@dataclass(frozen=True, eq=False)
class WriteTarget:
    """The manager the writer applies to, the retrievers its tools search (the BM25 one), the
    trace and usage ledger it records in (opened on first use), the live view it tells
    (`emit`), how waiting turns are batched and what runs after each write. `LongTermMemory`
    builds one (`write_target`); a custom `TurnConsumer` reads the same fields."""

    manager: BaseMemoryManager
    retrievers: Retrievers
    open_trace: Callable[[], WriteTrace]
    open_usage: Callable[[], UsageLedger]
    emit: Callable[[ToolEvent], None]
    batching: Callable[[], BatchPolicy]
    after_write: list[WriteHook] = field(default_factory=list)

    @property
    def user_id(self) -> str:
        return self.manager.user_id

    @property
    def trace(self) -> WriteTrace:
        return self.open_trace()

    @property
    def usage(self) -> UsageLedger:
        return self.open_usage()
