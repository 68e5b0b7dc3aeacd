"""Branch visibility: over many random checkpoint trees, filtering a ranking by `visible_ids`
equals brute-force filtering that walks the tree; the retriever's over-fetch equals it too."""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.store.branch import Lineage, filter_ranked, overfetch_k, visible_ids
from memory.store.item import MemoryItem
from tests.branch_trees import ancestors, brute_force_visible, checkpoint

EXAMPLES = 400


@dataclass(frozen=True)
class Case:
    parents: list[int]  # parents[i] < i; node 0 is the root
    current: int
    items: dict[str, MemoryItem]
    ranking: list[str]
    limit: int


@st.composite
def cases(draw: st.DrawFn) -> Case:
    size = draw(st.integers(1, 12))
    parents = [0] + [draw(st.integers(0, i - 1)) for i in range(1, size)]
    current = draw(st.integers(0, size - 1))
    count = draw(st.integers(0, 25))
    items: dict[str, MemoryItem] = {}
    for n in range(count):
        scope = draw(st.sampled_from(["user", "branch"]))
        node = draw(st.integers(0, size - 1))
        earlier = list(items)
        supersedes = ""
        if scope == "branch" and earlier and draw(st.booleans()):
            supersedes = draw(st.sampled_from(earlier))
        origin = {"thread_id": "t", "checkpoint_id": checkpoint(node), "turn_id": f"turn-{n}"}
        if scope == "user" and draw(st.booleans()):
            origin = {}  # user memories written before branch scope existed
        items[f"m{n}"] = MemoryItem(
            description=f"memory {n}",
            theme="t",
            deleted=draw(st.booleans()),
            scope=scope,
            origin=origin,
            supersedes=supersedes,
        )
    ids = list(items) + [f"unknown{n}" for n in range(draw(st.integers(0, 3)))]
    ranking = draw(st.permutations(ids))
    limit = draw(st.integers(0, 12))
    return Case(parents, current, items, list(ranking), limit)


def lineage_of(case: Case) -> Lineage:
    chain = ancestors(case.parents, case.current)
    return Lineage("t", frozenset(checkpoint(node) for node in chain))


@pytest.mark.slow  # many generated cases
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_filtering_a_ranking_by_visible_ids_equals_brute_force(case: Case) -> None:
    visible = visible_ids(case.items, lineage_of(case))
    expected = [
        i for i in case.ranking if brute_force_visible(case.parents, case.current, case.items, i)
    ][: case.limit]
    assert filter_ranked(case.ranking, visible, case.limit) == expected


@pytest.mark.slow  # many generated cases
@settings(max_examples=EXAMPLES, deadline=None)
@given(cases())
def test_a_sibling_branch_never_sees_another_branch_memory(case: Case) -> None:
    chain = {checkpoint(node) for node in ancestors(case.parents, case.current)}
    for memory_id in visible_ids(case.items, lineage_of(case)):
        item = case.items[memory_id]
        assert not item.deleted
        assert item.scope == "user" or item.origin["checkpoint_id"] in chain


@settings(max_examples=100, deadline=None)
@given(cases())
def test_without_a_lineage_every_live_memory_is_visible(case: Case) -> None:
    live = {i for i, item in case.items.items() if not item.deleted}
    assert visible_ids(case.items, None) == live


def test_overfetch_takes_forty_per_result_or_the_floor() -> None:
    assert overfetch_k(10) == 400
    assert overfetch_k(1) == 50
    assert overfetch_k(1, overfetch=10) == 40


def test_visible_ids_over_ten_thousand_items_is_cheap() -> None:
    """A figure, not a race: 10,000 items with 2,000 branch items over 100 checkpoints."""
    items = {
        f"m{n}": MemoryItem(
            description=f"memory {n}",
            theme="t",
            scope="branch" if n % 5 == 0 else "user",
            origin={"checkpoint_id": checkpoint(n % 100)},
            supersedes=f"m{n - 5}" if n % 5 == 0 and n % 10 == 0 and n else "",
            deleted=n % 17 == 0,
        )
        for n in range(10_000)
    }
    lineage = Lineage("t", frozenset(checkpoint(n) for n in range(0, 100, 2)))
    started = time.perf_counter()
    visible = visible_ids(items, lineage)
    elapsed = time.perf_counter() - started
    print(f"visible_ids over 10,000 items: {elapsed * 1000:.2f} ms")
    assert 0 < len(visible) < len(items)  # its cost is bench/branch_retrieval.py's
