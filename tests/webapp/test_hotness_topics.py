"""The editor's hotness and topic views over real HTTP: sort by hotness, the cold badge, topics."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory.store.backends.yaml_files import YamlMemoryManager
from memory.store.document import MemoryDocument
from memory.store.item import MemoryItem

pytestmark = pytest.mark.slow

# description, theme, age in days, hits. Episodic memories (plans, dated facts) fade with age;
# evergreen ones do not (memory.retrieval.hotness).
SEEDS = [
    ("User's flight to Tokyo is on 3 May", "travel", 200, 0),  # episodic, long past: cold
    ("User's mom likes green tea", "family", 400, 0),  # evergreen: old but not cold
    ("妈妈在招商银行上班", "家人", 3, 0),
    ("User plans to visit Kyoto next week", "travel", 1, 0),  # episodic, fresh
    ("User works at Google", "work", 30, 6),  # used often: the hottest
]


def seed(data_dir: Path, user: str) -> dict[str, str]:
    """The seeds written straight into the user's YAML file, with their ages and hits."""
    now = datetime.now(UTC)
    items, ids = {}, {}
    for number, (description, theme, age, hits) in enumerate(SEEDS):
        item = MemoryItem.create(description, theme, "seeded")
        stamp = (now - timedelta(days=age)).isoformat(timespec="microseconds")
        item.history[0]["time"] = item.latest_update_time = stamp
        item.hit = hits
        items[f"m{number}"] = item
        ids[description] = f"m{number}"
    YamlMemoryManager(data_dir, user)._save_all(MemoryDocument(items, [], 1))
    return ids


@pytest.fixture
def client(base_url: str, data_dir: Path) -> Any:
    user = f"u-{uuid.uuid4().hex[:8]}"
    http = httpx.Client(base_url=f"{base_url}/memories/api/", timeout=10)
    http.headers["X-Gulfstream-User"] = user
    http.ids = seed(data_dir, user)  # type: ignore[attr-defined]
    yield http
    http.close()


def cards(page: dict[str, Any]) -> list[dict[str, Any]]:
    return [card for group in page["groups"] for card in group["cards"]]


@pytest.mark.uses("hotness")
def test_cards_show_hotness_and_only_the_faded_plan_is_cold(client: httpx.Client) -> None:
    page = client.get("memories").json()
    shown = {card["description"]: card for card in cards(page)}
    cold = [description for description, card in shown.items() if card["cold"]]
    assert cold == ["User's flight to Tokyo is on 3 May"]
    assert shown["User's flight to Tokyo is on 3 May"]["hotness"] < 0.25
    assert shown["User's mom likes green tea"]["hotness"] == 1.0  # evergreen: no decay
    assert shown["User works at Google"]["hotness"] > 2.0


@pytest.mark.uses("hotness")
def test_sort_by_hotness_orders_every_card_and_pages_without_repeats(
    client: httpx.Client,
) -> None:
    whole = cards(client.get("memories", params={"sort": "hotness", "group": "theme"}).json())
    heat = [card["hotness"] for card in whole]
    # Grouped by theme, the groups come in the order of their hottest card.
    assert whole[0]["description"] == "User works at Google"
    assert whole[-1]["description"] == "User's flight to Tokyo is on 3 May"
    seen: list[dict[str, Any]] = []
    after = ""
    while True:
        params = {"sort": "hotness", "limit": "2", **({"after": after} if after else {})}
        page = client.get("memories", params=params).json()
        seen += cards(page)
        after = page["next_cursor"]
        if not after:
            break
    assert [card["id"] for card in seen] == [card["id"] for card in whole]
    assert [c["hotness"] for c in seen] == sorted(heat, reverse=True)
    newest = cards(client.get("memories").json())  # the default order is unchanged
    assert newest[0]["description"] == "User plans to visit Kyoto next week"


@pytest.mark.uses("topics")
def test_group_by_topic_files_both_languages_under_one_person(client: httpx.Client) -> None:
    page = client.get("memories", params={"group": "topic"}).json()
    groups = {group["key"]: group for group in page["groups"]}
    mother = groups["person:mother"]
    assert {card["description"] for card in mother["cards"]} == {
        "User's mom likes green tea",
        "妈妈在招商银行上班",
    }
    assert (mother["name"], mother["name_zh"]) == ("Mom", "妈妈")
    assert page["topics"]["person:mother"] == 2
    assert sum(page["topics"].values()) == page["total"] == len(SEEDS)  # each card once
    assert "organisation:google" in groups and "place:tokyo" in groups


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"sort": "random"}, "sort"),
        ({"group": "colour"}, "group"),
        ({"sort": "hotness", "after": '["2026-01-01", "m1"]'}, "after"),
        ({"sort": "hotness", "after": '[true, "x", "m1"]'}, "after"),
    ],
)
def test_an_unknown_order_grouping_or_cursor_is_refused_by_name(
    client: httpx.Client, params: dict[str, str], field: str
) -> None:
    response = client.get("memories", params=params)
    assert response.status_code == 400
    assert response.json()["field"] == field
