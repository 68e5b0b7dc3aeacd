"""The rules that find standing instructions, on the held-out split of a public labelled set
(tests/data/instruction_set.json, never tuned on): instructions kept, and neither one-off format
requests nor ordinary facts and preferences promoted, in English and in Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.text.instructions import is_standing_instruction

SET = Path(__file__).resolve().parents[1] / "data" / "instruction_set.json"
CASES = [c for c in json.loads(SET.read_text())["cases"] if c["split"] == "held-out"]


def _share(lang: str, labels: tuple[str, ...]) -> float:
    chosen = [c for c in CASES if c["lang"] == lang and c["label"] in labels]
    assert chosen, (lang, labels)
    return sum(is_standing_instruction(c["text"]) for c in chosen) / len(chosen)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_held_out_instructions_are_kept_and_nothing_else_is_promoted(lang: str) -> None:
    assert _share(lang, ("instruction",)) >= 0.95
    assert _share(lang, ("request",)) <= 0.02
    assert _share(lang, ("fact", "preference", "small_talk")) <= 0.01
    assert _share(lang, ("preference",)) == 0.0
