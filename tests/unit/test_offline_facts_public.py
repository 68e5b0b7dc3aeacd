"""The offline model files what people tell about themselves: on Persona-Chat's profile
sentences (tests/data/persona_facts.json, held-out split, never tuned on) it files about nine in
ten, in English and in Chinese, each in the sentence's language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.integration.models.offline_rules import extract_memories
from memory.text.language import has_cjk

DATA = Path(__file__).resolve().parents[1] / "data" / "persona_facts.json"
# The held-out figures when the rules were written (bench/offline_facts.py): 0.907 and 0.975.
FLOOR = {"en": 0.88, "zh": 0.94}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_offline_model_files_most_first_person_facts(language: str) -> None:
    facts = json.loads(DATA.read_text(encoding="utf-8"))["facts"]
    held_out = [f["text"] for f in facts if f["lang"] == language and f["split"] == "held-out"]
    assert len(held_out) >= 400
    filed = [
        text
        for text in held_out
        if any(has_cjk(m) == (language == "zh") for m, _, _ in extract_memories(text))
    ]
    assert len(filed) / len(held_out) >= FLOOR[language], sorted(set(held_out) - set(filed))[:20]
