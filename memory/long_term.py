"""LongTermMemory: the one facade the graph talks to — a read interface and a write interface."""

from __future__ import annotations

import logging
from typing import Any

from memory.manager import BaseMemoryManager
from memory.retrieval import RetrievalMode, Retrievers

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

    def get_related_memory_from(
        self, prompt: str, mode: RetrievalMode | str = RetrievalMode.LLM, limit: int = 10
    ) -> list[dict[str, str]]:
        """Memories related to `prompt` as `[{id, description, theme}]`, most relevant first.

        `mode` is `llm` (seed default), `mechanical` (BM25) or `hybrid`; LLM modes without a
        model run BM25. Any failure, a corrupt store included, is logged and gives `[]`: a
        retrieval failure never breaks the chat.
        """
        try:
            # Kept on the instance so the BM25 index is reused until the store changes.
            retrievers = self.__dict__.get("_retrievers")
            if retrievers is None or retrievers.llm is not self.llm:
                retrievers = Retrievers(self.manager, self.llm)
                self.__dict__["_retrievers"] = retrievers
            return retrievers.retrieve(prompt, mode, limit)
        except Exception:
            logger.exception("memory retrieval failed for user %r", self.manager.user_id)
            return []

    # ── write interface (downlink) ──────────────────────────────────────
    # start(); async send_history(turn_messages, session_id=None, turn_id=None) -> str;
    # async send_history_from_session(...); async stop()
