"""LongTermMemory: the one facade the graph talks to — a read interface and a write interface."""

from __future__ import annotations

import logging
from typing import Any

from memory.manager import BaseMemoryManager

logger = logging.getLogger(__name__)


class LongTermMemory:
    """One user's long-term memory, as in the seed: `get_related_memory_from` reads, and
    `start` / `send_history` / `stop` write through a durable background queue.
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        *,
        llm: Any | None = None,
        writer_llm: Any | None = None,
    ) -> None:
        self.manager = manager
        self.llm = llm
        self.writer_llm = writer_llm if writer_llm is not None else llm

    # ── read interface (uplink) ─────────────────────────────────────────
    # get_related_memory_from(prompt, mode=RetrievalMode.LLM, limit=10) -> list[dict[str, str]]

    # ── write interface (downlink) ──────────────────────────────────────
    # start(); async send_history(turn_messages, session_id=None, turn_id=None) -> str;
    # async send_history_from_session(...); async stop()
