"""The offline model's fact rules: the share of first-person facts it files, per language.

Run: `.venv/bin/python bench/offline_facts.py [--misses N]` (a second).

Data: tests/data/persona_facts.json, Persona-Chat's profile sentences in English and their
human-corrected Chinese translation (XPersona; tests/data/README.md): every one is a fact its
speaker tells about themselves. A sentence counts as filed when the offline model's rules make
at least one memory of it in the sentence's language. Tuning (the source's validation files)
and held-out (its test files) side by side; the rules were widened looking at tuning misses
only. `--misses N` prints N tuning misses per language.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.integration.models.offline_rules import extract_memories
from memory.text.language import has_cjk

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "persona_facts.json"


def filed(text: str, language: str) -> bool:
    memories = [description for description, _, _ in extract_memories(text)]
    return any(has_cjk(m) == (language == "zh") for m in memories)


def main(argv: list[str]) -> None:
    show = int(argv[argv.index("--misses") + 1]) if "--misses" in argv else 0
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    misses: dict[str, list[str]] = defaultdict(list)
    for fact in json.loads(DATA.read_text(encoding="utf-8"))["facts"]:
        key = (fact["lang"], fact["split"])
        ok = filed(fact["text"], fact["lang"])
        counts[key][0] += ok
        counts[key][1] += 1
        if not ok and fact["split"] == "tuning":
            misses[fact["lang"]].append(fact["text"])
    print("first-person facts filed by the offline model (share of persona sentences)")
    print(f"{'language':<10}{'tuning':>18}{'held-out':>18}")
    for language in ("en", "zh"):
        cells = []
        for split in ("tuning", "held-out"):
            done, total = counts[(language, split)]
            cells.append(f"{done / total:.3f} ({done}/{total})")
        print(f"{language:<10}{cells[0]:>18}{cells[1]:>18}")
    for language, texts in misses.items():
        for text in texts[:show]:
            print(f"  miss [{language}] {text}")


if __name__ == "__main__":
    main(sys.argv[1:])
