"""LLMRetriever: numbered memories, a few-shot prompt, and the model answers a JSON index array."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig

from memory.prompts.retrieval import find_related_memory_prompts
from memory.prompts.writer import Sections
from memory.retrieval.bm25 import MechanicalRetriever
from memory.retrieval.bm25_index import IndexedMemory
from memory.retrieval.modes import OnFailure
from memory.retrieval.parsing import parse_indices
from memory.store.branch import Lineage, visible_ids
from memory.store.item import MemoryItem, local_date
from memory.store.manager import BaseMemoryManager
from memory.text.fencing import escape_data
from memory.text.language import resolve_language
from memory.text.messages import text_of

logger = logging.getLogger(__name__)

_QUIET_RUN: RunnableConfig = {
    "tags": ["nostream", "memory_retrieval"],
    "run_name": "memory_retrieval",
}


def format_memory_lines(entries: Sequence[IndexedMemory]) -> str:
    """The numbered list the prompt shows, `[i] (theme, last update date) description`,
    escaped."""
    return "\n".join(
        f"[{i}] ({escape_data(entry.theme)}, {local_date(entry.latest_update_time) or 'unknown'}) "
        f"{escape_data(entry.description)}"
        for i, entry in enumerate(entries)
    )


def entries_from_items(items: Mapping[str, MemoryItem]) -> list[IndexedMemory]:
    """The store's live items in the shape the prompt needs."""
    return [
        IndexedMemory(i, item.description, item.theme, item.latest_update_time, 0.0, item.hit)
        for i, item in items.items()
    ]


class LLMRetriever:
    """Let a chat model read the memories and pick the related ones; never raise into the chat.

    On an exception or an unusable answer it returns the mechanical result (`on_failure=
    "mechanical"`, the default, when a fallback is given) or `[]` (`on_failure="empty"`, the
    behaviour of a retriever that must never guess), and logs why.
    """

    def __init__(
        self,
        manager: BaseMemoryManager,
        llm: Any,
        *,
        fallback: MechanicalRetriever | None = None,
        language: str = "en",
        on_failure: OnFailure = "mechanical",
        sections: Sections | None = None,
    ) -> None:
        if on_failure not in ("mechanical", "empty"):
            raise ValueError(f"on_failure must be 'mechanical' or 'empty', not {on_failure!r}")
        self.manager = manager
        self.llm = llm
        self.fallback = fallback
        self.language = language
        self.on_failure: OnFailure = on_failure
        self.sections = sections  # the example themes of the prompt, when given
        self.last_failure: str | None = None  # why the last call fell back, for logs and tests

    def retrieve(self, query: str, limit: int = 10, lineage: Lineage | None = None) -> list[dict]:
        """Memories related to `query` as `{id, description, theme, created_time,
        latest_update_time}`, most relevant first.

        With a `lineage`, the model is shown only the memories that run may read.
        """
        if not isinstance(query, str) or not query.strip() or limit <= 0:
            return []
        try:
            items = self.manager.list_items()
            if lineage is not None:
                visible = visible_ids(self.manager.all_items(), lineage)
                items = {i: item for i, item in items.items() if i in visible}
            entries = entries_from_items(items)
        except Exception as exc:
            logger.warning("LLM retrieval could not read the store: %s", exc)
            return []
        return self.select(query, entries, limit, lineage)

    def select(
        self,
        query: str,
        entries: Sequence[IndexedMemory],
        limit: int,
        lineage: Lineage | None = None,
    ) -> list[dict]:
        """Ask the model to choose among `entries` (all memories, or hybrid's candidates).

        `entries` are already filtered to the lineage; it is passed on to the BM25 fallback.
        """
        self.last_failure = None
        if not entries:
            return []
        try:
            # "nostream": the model's JSON answer must not stream into the chat as if it were the
            # reply (LangGraph's messages stream skips runs with this tag); tracing still sees it.
            messages = self.messages(query, entries)
            if isinstance(self.llm, Runnable):
                answer = self.llm.invoke(messages, config=_QUIET_RUN)
            else:  # any object with invoke(messages) will do
                answer = self.llm.invoke(messages)
            indices = parse_indices(text_of(getattr(answer, "content", answer)), len(entries))
        except Exception as exc:
            reason = f"the model raised {type(exc).__name__}: {exc}"
            return self._fail(query, limit, reason, lineage)
        if indices is None:
            text = text_of(getattr(answer, "content", answer))
            return self._fail(query, limit, f"unusable answer {text[:200]!r}", lineage)
        return [entries[i].as_result() for i in indices[:limit]]

    def messages(self, query: str, entries: Sequence[IndexedMemory]) -> list[Any]:
        """System prompt and the user message with the fenced memory list and the query."""
        # The prompt in the language the user writes in, unless one is pinned ("zh-CN" too).
        language = resolve_language("auto", query) if self.language == "auto" else self.language
        system, template = find_related_memory_prompts(language, self.sections)
        user = template.format(
            today=date.today().isoformat(),
            memories=format_memory_lines(entries),
            query=escape_data(query),
        )
        return [SystemMessage(content=system), HumanMessage(content=user)]

    def _fail(
        self, query: str, limit: int, reason: str, lineage: Lineage | None = None
    ) -> list[dict]:
        self.last_failure = reason
        if self.on_failure == "empty" or self.fallback is None:
            logger.warning("LLM retrieval failed (%s); returning no memories", reason)
            return []
        logger.warning("LLM retrieval failed (%s); using the BM25 result", reason)
        try:
            return self.fallback.retrieve(query, limit, lineage)
        except Exception as exc:
            logger.warning("BM25 fallback failed too: %s", exc)
            return []
