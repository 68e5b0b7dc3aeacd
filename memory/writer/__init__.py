"""The memory writer: the `Turn` it is handed, the memory agent and its tools, the durable queue,
journal and trace. Imports retrieval (the agent's searches), admission, the store, text, usage
and prompts; it is handed a `WriteTarget`, never the facade. The agent needs LangChain; the
queue, journal and trace do not (they are imported on use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.lazy import lazy_exports

if TYPE_CHECKING:
    from memory.writer.breaker import WriterPaused
    from memory.writer.consumer import ConsumeResult, MemoryConsumer, MemoryWriteFailed
    from memory.writer.guards import detect_forget_request, find_secret
    from memory.writer.journal import JournalEntry, JournalError, TurnJournal
    from memory.writer.local import LocalWriter, local_writer
    from memory.writer.queue import DurableWriteQueue, RetryPolicy, WriteStatus
    from memory.writer.staging import EventCallback, StagedChange, ToolEvent
    from memory.writer.tools import MemoryToolkit
    from memory.writer.trace import TraceEntry, WriteTrace

_LAZY = {
    "ConsumeResult": "memory.writer.consumer",
    "MemoryConsumer": "memory.writer.consumer",
    "MemoryWriteFailed": "memory.writer.consumer",
    "WriterPaused": "memory.writer.breaker",
    "detect_forget_request": "memory.writer.guards",
    "find_secret": "memory.writer.guards",
    "JournalEntry": "memory.writer.journal",
    "JournalError": "memory.writer.journal",
    "TurnJournal": "memory.writer.journal",
    "LocalWriter": "memory.writer.local",
    "local_writer": "memory.writer.local",
    "DurableWriteQueue": "memory.writer.queue",
    "RetryPolicy": "memory.writer.queue",
    "WriteStatus": "memory.writer.queue",
    "EventCallback": "memory.writer.staging",
    "StagedChange": "memory.writer.staging",
    "ToolEvent": "memory.writer.staging",
    "MemoryToolkit": "memory.writer.tools",
    "TraceEntry": "memory.writer.trace",
    "WriteTrace": "memory.writer.trace",
}
__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [
    "ConsumeResult",
    "DurableWriteQueue",
    "EventCallback",
    "JournalEntry",
    "JournalError",
    "LocalWriter",
    "MemoryConsumer",
    "MemoryToolkit",
    "MemoryWriteFailed",
    "RetryPolicy",
    "StagedChange",
    "ToolEvent",
    "TraceEntry",
    "TurnJournal",
    "WriteStatus",
    "WriteTrace",
    "WriterPaused",
    "detect_forget_request",
    "find_secret",
    "local_writer",
]
