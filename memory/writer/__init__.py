"""The memory writer: the memory agent and its tools, the durable queue, journal and trace.

The agent needs LangChain; the queue, journal and trace do not (they are imported on use).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    "ConsumeResult": "consumer",
    "MemoryConsumer": "consumer",
    "MemoryWriteFailed": "consumer",
    "WriterPaused": "breaker",
    "detect_forget_request": "guards",
    "find_secret": "guards",
    "JournalEntry": "journal",
    "JournalError": "journal",
    "TurnJournal": "journal",
    "LocalWriter": "local",
    "local_writer": "local",
    "DurableWriteQueue": "queue",
    "RetryPolicy": "queue",
    "WriteStatus": "queue",
    "EventCallback": "staging",
    "StagedChange": "staging",
    "ToolEvent": "staging",
    "MemoryToolkit": "tools",
    "TraceEntry": "trace",
    "WriteTrace": "trace",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"memory.writer.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'memory.writer' has no attribute {name!r}")


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
