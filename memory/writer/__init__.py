"""The memory downlink: the memory agent and its tools, the write trace, the durable queue."""

from memory.writer.consumer import ConsumeResult, MemoryConsumer, MemoryWriteFailed
from memory.writer.guards import detect_forget_request, find_secret
from memory.writer.staging import EventCallback, StagedChange, ToolEvent
from memory.writer.tools import MemoryToolkit, make_memory_tools
from memory.writer.trace import TraceEntry, WriteTrace
from memory.writer.turns import check_turn_messages, extract_last_turn

__all__ = [
    "ConsumeResult",
    "EventCallback",
    "MemoryConsumer",
    "MemoryToolkit",
    "MemoryWriteFailed",
    "StagedChange",
    "ToolEvent",
    "TraceEntry",
    "WriteTrace",
    "check_turn_messages",
    "detect_forget_request",
    "extract_last_turn",
    "find_secret",
    "make_memory_tools",
]
