"""Entity rules on a labelled set of memories in English and Chinese, and alias normalisation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.text.entities import extract_entities

LABELLED = Path(__file__).resolve().parents[1] / "data" / "entity_set.json"


def scores() -> tuple[float, float, int, list[str]]:
    sentences = json.loads(LABELLED.read_text(encoding="utf-8"))["sentences"]
    found = expected = correct = 0
    misses = []
    for sentence in sentences:
        got = {entity.key for entity in extract_entities(sentence["text"])}
        wanted = set(sentence["topics"])
        found, expected = found + len(got), expected + len(wanted)
        correct += len(got & wanted)
        if got != wanted:
            misses.append(f"{sentence['text']}: extra {got - wanted}, missing {wanted - got}")
    return correct / found, correct / expected, len(sentences), misses


def test_labelled_set_precision_and_recall() -> None:
    precision, recall, count, misses = scores()
    print(f"\nentities, {count} labelled memories: precision {precision:.3f}, recall {recall:.3f}")
    assert count >= 60
    assert precision >= 0.9 and recall >= 0.9, misses


@pytest.mark.parametrize(
    "text",
    ["my mom", "Mom", "my mother", "User's mother", "我妈", "妈妈", "母亲", "老妈"],
)
def test_every_alias_of_mother_is_one_topic(text: str) -> None:
    keys = [entity.key for entity in extract_entities(text, lenient=True)]
    assert keys == ["person:mother"]


def test_the_same_place_in_both_languages_is_one_topic() -> None:
    english = extract_entities("User's flight to Tokyo is on 3 May")
    chinese = extract_entities("5月3日飞东京")
    assert {e.key for e in english} == {e.key for e in chinese} == {"place:tokyo", "date:05-03"}
    tokyo = next(e for e in english if e.kind == "place")
    assert (tokyo.name, tokyo.name_zh) == ("Tokyo", "东京")


def test_a_longer_name_wins_over_the_place_inside_it() -> None:
    # "北京大学" is a university, not also the city; "Bank of China" is a bank, not the country.
    assert [e.key for e in extract_entities("弟弟在北京大学读书")] == [
        "person:brother",
        "organisation:peking university",
    ]
    assert "place:china" not in {e.key for e in extract_entities("Savings at Bank of China")}


def test_words_that_only_look_like_entities_are_left_alone() -> None:
    for text in (
        "User uses the package manager pip",  # not the user's manager
        "Let us meet at the usual place",  # "us" is not the USA
        "User likes apple pie",  # not the company
        "周末去超市买菜",  # a supermarket, not a city
        "她在一家公司工作",  # some company, no name
        "User is fluent in Python",  # a language, not a place
    ):
        assert extract_entities(text) == [], text


@pytest.mark.slow  # inputs of 5,000 to 10,000 characters
def test_hostile_or_empty_input_gives_nothing_and_never_raises() -> None:
    for text in ("", "   ", None, 42, "(" * 5000, "\x00\u202e" * 100, "妈" * 10_000):
        found = extract_entities(text)  # type: ignore[arg-type]
        assert all(entity.key for entity in found)
