"""The consolidation pass on memories other people wrote (tests/data/public_consolidation_set.json,
held-out split), with the offline multilingual model in a real SQLite store: English meets the
targets, Chinese stays at what was measured, and one whole pass loses nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import LongTermMemory
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.upkeep.consolidation import ConsolidationPolicy, duplicate_groups
from memory.upkeep.consolidation.semantic import embed
from tests.public_consolidation import PublicStore, figures, public_store

pytestmark = pytest.mark.skipif(
    not OfflineEncoder.available(), reason="the offline embedding model is not installed"
)
GROUPS_TARGET, DISTINCT_TARGET = 0.9, 0.98


@pytest.fixture(scope="module")
def held_out() -> tuple[PublicStore, list[list[str]]]:
    store = public_store("held-out")
    vectors = embed(OfflineEncoder(), list(store.texts.values()))
    return store, duplicate_groups(store.texts, vectors=vectors)


def test_english_held_out_duplicates_merge_and_nothing_else(held_out) -> None:
    store, found = held_out
    english = figures(store, found, "en")
    assert english.groups_merged >= GROUPS_TARGET, english
    assert english.distinct_kept >= DISTINCT_TARGET, english
    assert english.traps_merged == 0, english


def test_chinese_held_out_is_no_worse_than_measured(held_out) -> None:
    """Chinese is short of the targets (docs/CONSOLIDATION.md): a quarter of Chinese STS-B's
    same-meaning pairs are as far apart (cosine under 0.81) as its look-alikes, and those need a
    model to confirm. These are the figures measured once the rules were chosen on the tuning
    split (0.531 merged, 1.000 kept, 0 traps there); the previous rule (cosine 0.97 and the
    English guards) merged 0.113 of these held-out groups, kept 0.988 and merged 1 trap."""
    store, found = held_out
    chinese = figures(store, found, "zh")
    assert chinese.groups_merged >= 0.45, chinese
    assert chinese.distinct_kept >= 0.97, chinese
    assert chinese.traps_merged <= 2, chinese


@pytest.mark.xfail(strict=True, reason="Chinese duplicates by meaning need a model to confirm")
def test_chinese_held_out_meets_the_targets(held_out) -> None:
    store, found = held_out
    chinese = figures(store, found, "zh")
    assert chinese.groups_merged >= GROUPS_TARGET and chinese.distinct_kept >= DISTINCT_TARGET
    assert chinese.traps_merged == 0


def test_a_whole_pass_on_the_english_held_out_store_loses_nothing(tmp_path: Path) -> None:
    store = public_store("held-out")
    english = {i: t for i, t in store.texts.items() if store.languages[i] == "en"}
    manager = open_memory_manager(f"sqlite:{tmp_path / 'memory.db'}", "alice")
    write_items(manager, {i: MemoryItem.create(t, "fact", "seed") for i, t in english.items()})
    memory = LongTermMemory(manager, embeddings="default", data_dir=tmp_path)
    report = memory.consolidate(policy=ConsolidationPolicy(max_removed_share=0.5))
    assert not report.refused and report.merged
    everything, live = manager.all_items(), manager.list_items()
    assert set(everything) == set(english)  # nothing dropped: every memory live or a tombstone
    for memory_id, item in everything.items():
        if memory_id not in live:
            survivor = item.history[-1]["into"]  # the tombstone says where it went
            assert item.history[-1]["action"] == "merged_into" and survivor in live
            assert memory_id in report.merged[survivor]
            manager.restore(memory_id)  # and it can be had back
            assert memory_id in manager.list_items()
    groups = [[survivor, *absorbed] for survivor, absorbed in report.merged.items()]
    assert figures(store, groups, "en").groups_merged >= GROUPS_TARGET
