"""Admission on the write path (`memory.admission`): the scorer's verdict put on a finished turn."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from memory.admission import score_turn
from memory.integration.run_memory import RunMemory
from memory.writer.turn import Turn


def admit(run: RunMemory, turn: Turn, related: Sequence[dict[str, Any]]) -> Turn:
    """The turn with the admission scorer's verdict (`memory.admission`), unless the deployment
    turned admission off. The memories retrieved for this turn tell a repeat; the assistant's
    message before it tells an answer."""
    if not run.settings.admission:
        return turn
    memories = [str(m.get("description", "")) for m in related]
    # The assistant's message the user replies to: an answer to its question is kept.
    asked = next((m["content"] for m in reversed(turn.context) if m["role"] == "assistant"), "")
    admission = score_turn(turn.user_text, memories=memories, after=asked)
    return dataclasses.replace(turn, admission=admission)
