"""The chat graph's state: the memory's fields (the conversation, this turn's memories, its
hand-off, cost and running summary) and whatever this app adds."""

from __future__ import annotations

from dataclasses import dataclass

from memory.integration import InputState, MemoryState

__all__ = ["AppInput", "InputState", "State"]


@dataclass
class AppInput(InputState):
    """What a run takes: the conversation's new messages, or `reminder`, the text of a reminder
    the server's scheduler brings (graph/reminders.py)."""

    reminder: str = ""


@dataclass
class State(MemoryState):
    """The full state: `MemoryState`'s fields (see its docstring); add this app's own here.
    `reminder`: set only in a scheduled reminder's run, which says it and ends."""

    reminder: str = ""
