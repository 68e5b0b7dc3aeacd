"""Standing instructions: which sentences the rules take as instructions for every reply.

Run: `.venv/bin/python bench/instructions.py [--misses]` (a second).

On tests/data/instruction_set.json (tests/data/README.md: public sentences, en and zh), per
language, tuning and held-out side by side: the share of standing instructions kept as
instructions (`memory.text.instructions.is_standing_instruction`, what the offline model files
by), and the share wrongly promoted of one-off format requests, of ordinary statements (facts,
preferences, small talk) and of preferences alone ("I prefer tea" is no instruction for replies).
`--misses` lists the tuning split's mistakes (the held-out split is never tuned on).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.text.instructions import is_standing_instruction

SET = Path(__file__).resolve().parents[1] / "tests" / "data" / "instruction_set.json"
ORDINARY = ("fact", "preference", "small_talk")
ROWS = (
    ("instructions kept", ("instruction",), True),
    ("one-off requests promoted", ("request",), False),
    ("ordinary statements promoted", ORDINARY, False),
    ("  of them preferences", ("preference",), False),
)


def shares(cases: list[dict[str, str]]) -> dict[tuple[str, str, str], tuple[int, int]]:
    """(row, lang, split) → (hits, total): kept for instructions, promoted for the others."""
    counts: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in cases:
        promoted = is_standing_instruction(case["text"])
        for row, labels, _ in ROWS:
            if case["label"] in labels:
                count = counts[(row, case["lang"], case["split"])]
                count[0] += promoted
                count[1] += 1
    return {key: (hits, total) for key, (hits, total) in counts.items()}


def main(argv: list[str]) -> int:
    cases = json.loads(SET.read_text())["cases"]
    table = shares(cases)
    print(f"{'':32}{'en tuning':>16}{'en held-out':>16}{'zh tuning':>16}{'zh held-out':>16}")
    for row, _, _ in ROWS:
        cells = []
        for lang in ("en", "zh"):
            for split in ("tuning", "held-out"):
                hits, total = table.get((row, lang, split), (0, 0))
                cells.append(f"{hits / total:.3f} ({hits}/{total})" if total else "—")
        print(f"{row:32}" + "".join(f"{cell:>16}" for cell in cells))
    if "--misses" in argv:
        for case in cases:
            wanted = case["label"] == "instruction"
            if case["split"] == "tuning" and is_standing_instruction(case["text"]) != wanted:
                print(f"  {case['label']:>11} {case['lang']} {case['text'][:110]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
