"""Hotness with the clock moved forward, and what it orders: ties, broad questions, min_score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory.long_term import LongTermMemory
from memory.retrieval.fusion import reciprocal_rank_fusion
from memory.retrieval.hotness import COLD_BELOW, STALE_FACTOR, RecallStats, hotness, is_cold
from memory.retrieval.hotness_ranking import HotnessRanking
from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import Change

PLAN = "User is going to Kyoto next month"  # episodic: a plan
FACT = "User is allergic to peanuts"  # evergreen


def ids(found: list[dict[str, str]]) -> list[str]:
    return [memory["id"] for memory in found]


@pytest.fixture
def memory(tmp_path: Path) -> LongTermMemory:
    return LongTermMemory(YamlMemoryManager(tmp_path, "alice"), embeddings="off")


def test_an_unused_plan_falls_below_a_recalled_one_and_a_fact_does_not_decay(
    memory: LongTermMemory,
) -> None:
    manager = memory.manager
    recalled = manager.add(PLAN, "travel")
    unused = manager.add("User is flying to Oslo next week for an interview", "travel")
    fact = manager.add(FACT, "health")
    memory.record_recall([recalled], "where am I going next month")
    memory.record_recall([recalled], "any trips planned?")

    today = memory.hotness()
    assert today[recalled] > today[unused] == pytest.approx(1.0, abs=0.01)
    assert today[fact] == pytest.approx(1.0, abs=0.01)

    later = memory.hotness(now=datetime.now(UTC) + timedelta(days=90))  # three half-lives
    assert later[unused] == pytest.approx(today[unused] / 8, rel=0.01)
    assert is_cold(later[unused]) and later[unused] < COLD_BELOW
    assert later[recalled] < today[recalled]  # it decays too, from a higher start
    assert later[recalled] > later[unused]
    assert later[fact] == today[fact]  # evergreen: age does not matter


def test_half_life_is_the_memory_s_setting(memory: LongTermMemory) -> None:
    plan = memory.manager.add(PLAN, "travel")
    in_ten_days = datetime.now(UTC) + timedelta(days=10)
    memory.half_life_days = 10
    assert memory.hotness(now=in_ten_days)[plan] == pytest.approx(0.5, rel=0.01)
    memory.half_life_days = 0  # no decay
    assert memory.hotness(now=in_ten_days)[plan] == pytest.approx(1.0, rel=0.01)


def test_ranking_hotness_is_the_documented_formula(memory: LongTermMemory) -> None:
    manager = memory.manager
    texts = [(PLAN, "travel"), (FACT, "health"), ("User has a meeting on Friday", "work"),
             ("用户下周要去上海出差", "工作"), ("用户喜欢猫", "宠物")]  # fmt: skip
    for text, theme in texts:
        manager.add(text, theme)
    items = manager.list_items()
    first, second, third = list(items)[:3]
    manager.hit(first)
    memory.record_recall([first, second], "question one")
    memory.record_recall([second, third], "question two")
    stats = memory.recall_stats()
    index = memory.retrievers.mechanical.index()
    moment = datetime.now(UTC) + timedelta(days=45)
    ranking = HotnessRanking(lambda: stats, 30.0).values(index, now=moment.timestamp())
    items = manager.list_items()
    for memory_id, item in items.items():
        expected = hotness(item, stats.get(memory_id, RecallStats()), now=moment)
        assert ranking[index.positions[memory_id]] == pytest.approx(expected, rel=1e-6)


def test_equal_scores_go_to_the_hotter_memory(memory: LongTermMemory) -> None:
    manager = memory.manager
    twins = [manager.add("User likes green tea", "taste") for _ in range(3)]
    manager.add("User likes black coffee", "taste")
    before = ids(memory.get_related_memory_from("green tea", "mechanical", limit=3))
    assert sorted(before) == sorted(twins)
    coldest = before[-1]  # without any use, the order is by recency: the newest first
    memory.record_recall([coldest], "what tea do I like?")
    memory.recall_stats()  # written now (a flush)
    assert ids(memory.get_related_memory_from("green tea", "mechanical", limit=3))[0] == coldest
    # The boundary of the limit is a tie too: the hotter twin is kept, not an arbitrary one.
    assert ids(memory.get_related_memory_from("green tea", "mechanical", limit=1)) == [coldest]


def test_fused_ties_go_to_the_hotter_item() -> None:
    lexical, semantic = [7, 8, 9], [9, 8, 7]  # 7 and 9: 1/(5+1) + 1/(5+3) each, 8 less
    assert reciprocal_rank_fusion([lexical, semantic], 3) == [7, 9, 8]  # BM25's order
    asked: list[list[int]] = []

    def hotness(items: list[int]) -> list[float]:
        asked.append(items)
        return [2.0 if item == 9 else 1.0 for item in items]

    assert reciprocal_rank_fusion([lexical, semantic], 3, hotness=hotness) == [9, 7, 8]
    assert sorted(asked[0]) == [7, 9]  # only the tied items are looked at


def test_who_am_i_puts_a_much_recalled_fact_first(memory: LongTermMemory) -> None:
    manager = memory.manager
    facts = [manager.add(text, "me") for text in
             ("User's name is Ada", "User lives in Lisbon", "User speaks Portuguese")]  # fmt: skip
    first_before = ids(memory.get_related_memory_from("Who am I?", "mechanical"))[0]
    favourite = next(f for f in facts if f != first_before)
    for question in ("where do I live", "which city is home", "am I in Portugal"):
        memory.record_recall([favourite], question)
    memory.recall_stats()
    assert ids(memory.get_related_memory_from("Who am I?", "mechanical"))[0] == favourite
    assert ids(memory.get_related_memory_from("我是谁？", "mechanical"))[0] == favourite


def test_what_is_new_still_shows_recent_things(memory: LongTermMemory) -> None:
    manager = memory.manager
    old = manager.add("User likes jazz", "taste")
    manager.hit(old)
    days_ago = (datetime.now(UTC) - timedelta(days=200)).isoformat()
    with manager.transaction() as transaction:  # an old, much-used fact
        item = manager.list_items()[old]
        item.latest_update_time = days_ago
        transaction.put(old, item)
    recent = manager.add("User started learning the cello", "hobby")
    assert ids(memory.get_related_memory_from("what's new?", "mechanical"))[0] == recent
    assert ids(memory.get_related_memory_from("Who am I?", "mechanical"))[0] == old


def test_min_score_drops_weak_matches_but_keeps_the_best(tmp_path: Path) -> None:
    manager = YamlMemoryManager(tmp_path, "alice")
    strong = manager.add("User drinks green tea every morning with green tea biscuits", "taste")
    weak = manager.add("User visited a tea museum once, long ago", "travel")
    loose = LongTermMemory(manager, embeddings="off")
    assert set(ids(loose.get_related_memory_from("green tea", "mechanical"))) == {strong, weak}
    strict = LongTermMemory(manager, embeddings="off", min_score=0.5)
    assert ids(strict.get_related_memory_from("green tea", "mechanical")) == [strong]
    index = strict.retrievers.mechanical.index()
    scores = index.scores(["green", "tea"])
    assert scores[weak] < 0.5 * scores[strong]  # the drop is the rule's, not chance
    # A query whose only match is weak still gets it: the best match is never dropped.
    assert ids(strict.get_related_memory_from("museum", "mechanical")) == [weak]
    assert strict.get_related_memory_from("violin", "mechanical") == []


def test_min_score_outside_zero_to_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="min_score"):
        LongTermMemory(YamlMemoryManager(tmp_path, "alice"), embeddings="off", min_score=1.5)


def test_a_plan_marked_stale_turns_cold_at_once_and_ranks_below_current_ones(
    memory: LongTermMemory,
) -> None:
    # What consolidation does to a plan whose date passed (memory.upkeep.consolidation): a "stale"
    # history entry. From then on the plan is cold and a broad question lists it last.
    manager = memory.manager
    passed = manager.add("User's flight to Tokyo is on 3 May", "travel")
    coming = manager.add("User's trip to Rome is on 20 December", "travel")
    marked_before = memory.hotness()[passed]
    manager.apply([Change(op="stale", id=passed, reason="consolidation")], "consolidation:t:0")

    now = memory.hotness()
    assert now[passed] == pytest.approx(marked_before * STALE_FACTOR, rel=0.01)
    assert is_cold(now[passed]) and not is_cold(now[coming])
    index = memory.retrievers.mechanical.index()
    ranking = memory.retrievers.mechanical.hotness.values(index)
    assert ranking[index.positions[passed]] == pytest.approx(now[passed], rel=1e-6)
    found = ids(memory.get_related_memory_from("what's new?", "mechanical"))
    assert found.index(coming) < found.index(passed)

    manager.update(passed, "rebooked", new_description="User's flight to Tokyo is on 3 Dec")
    assert not is_cold(memory.hotness()[passed])  # an edit makes it current again
