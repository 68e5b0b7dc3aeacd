"""The graph's state: the conversation and the memories related to the current turn."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph import add_messages


@dataclass
class InputState:
    """What a caller sends: only messages (e.g. `{"messages": [{"role": "user", ...}]}`)."""

    messages: Annotated[Sequence[AnyMessage], add_messages] = field(default_factory=list)


@dataclass
class State(InputState):
    """The full state, both extra fields replaced on every turn by `retrieve_memory`:
    `related_memories`, a list of `{"id", "description", "theme"}` dicts, most relevant first,
    only those this branch of the conversation may read; `core_context`, the user's core
    context block (`{}` until the first turn was written).
    """

    related_memories: list[dict[str, Any]] = field(default_factory=list)
    core_context: dict[str, str] = field(default_factory=dict)
