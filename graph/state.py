"""The chat graph's state: the memory's fields (the conversation, this turn's memories, its
hand-off, cost and running summary) and whatever this app adds."""

from __future__ import annotations

from dataclasses import dataclass

from memory.integration import InputState, MemoryState

__all__ = ["InputState", "State"]


@dataclass
class State(MemoryState):
    """The full state: `MemoryState`'s fields (see its docstring); add this app's own here."""
