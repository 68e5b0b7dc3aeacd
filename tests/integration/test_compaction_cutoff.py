"""Where compaction may cut a conversation, over many generated conversations (deleted with
memory/integration/compaction.py: docs/CUSTOMIZING.md, 6)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import HumanMessage

from memory.integration.compaction import choose_cutoff
from tests.integration.test_prompt_budget_properties import conversation, paired, shapes


@settings(max_examples=200, deadline=None)
@given(shape=shapes, room=st.integers(0, 3000), keep=st.integers(1, 12))
def test_a_cut_never_splits_a_tool_round_nor_drops_the_latest_question(
    shape: list[tuple[int, int]], room: int, keep: int
) -> None:
    messages = conversation(shape)
    cutoff = choose_cutoff(messages, room, keep)
    gone, kept = messages[:cutoff], messages[cutoff:]
    assert paired(gone) and paired(kept)
    latest = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    assert cutoff <= latest
    assert not kept or isinstance(kept[0], HumanMessage)
    if cutoff and len(shape) > 1:
        assert len(kept) >= min(keep, len(messages) - cutoff)
