"""What read_memories shows when the store is too large to show whole: related, recent, used."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memory.writer.staging import StagedMemory, StagedView

logger = logging.getLogger(__name__)

# A model reads ~200 one-line memories well; 10,000 overflow its context and every write fails.
MAX_SHOWN_ITEMS = 200
MAX_SHOWN_CHARS = 20_000
RELATED_SHARE = 0.6  # of the item budget: the rest goes to the most recent and most used


@dataclass(frozen=True)
class Selection:
    """The memories to show (store order) and how many the view holds in all."""

    shown: list[StagedMemory]
    total: int
    query: str = ""

    @property
    def partial(self) -> bool:
        return len(self.shown) < self.total


def line_chars(memory: StagedMemory) -> int:
    """About what one memory costs in the rendered list (its line and a share of its heading)."""
    return len(memory.description) + len(str(memory.short_id)) + 8


def fits(view: StagedView, max_items: int, max_chars: int) -> bool:
    """Whether the whole view fits the budget."""
    if len(view.live) > max_items:
        return False
    return sum(line_chars(m) for m in view.live.values()) <= max_chars


def warm_index(view: StagedView, max_items: int = MAX_SHOWN_ITEMS) -> None:
    """Build the BM25 index outside the event loop when the view will need it (a large store)."""
    if len(view.live) > max_items:
        view.ranking().index()


def select(
    view: StagedView,
    query: str,
    explicit: bool = False,
    *,
    max_items: int = MAX_SHOWN_ITEMS,
    max_chars: int = MAX_SHOWN_CHARS,
) -> Selection:
    """The whole view when it fits; else this turn's new memories, the ones BM25 ranks highest
    for `query`, then (unless the model asked with `explicit` words) the recent and much-used
    ones, until the item or character budget is spent."""
    memories = list(view.live.values())
    if fits(view, max_items, max_chars):
        return Selection(memories, len(memories), query)
    by_real_id = {m.real_id: m for m in memories}
    chosen: dict[int, StagedMemory] = {}
    used_chars = 0

    def take(memory: StagedMemory | None) -> bool:
        nonlocal used_chars
        if memory is None or memory.short_id in chosen:
            return True
        if len(chosen) >= max_items or used_chars + line_chars(memory) > max_chars:
            return False
        chosen[memory.short_id] = memory
        used_chars += line_chars(memory)
        return True

    for memory in memories:
        if memory.new:
            take(memory)
    retriever = view.ranking()
    related_budget = max_items if explicit else int(max_items * RELATED_SHARE)
    if query.strip():
        try:
            index = retriever.index()
            for position in retriever.rank(index, query, related_budget * 2):
                if len(chosen) >= related_budget or not take(
                    by_real_id.get(index.entries[position].id)
                ):
                    break
        except Exception:  # a ranking failure still shows the recent memories
            logger.exception("ranking memories for read_memories failed")
    if not explicit:
        index = retriever.index()
        for position in index.broad_order:
            if not take(by_real_id.get(index.entries[position].id)):
                break
    shown = sorted(chosen.values(), key=lambda m: m.short_id)
    return Selection(shown, len(memories), query)
