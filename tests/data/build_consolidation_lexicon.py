"""Learn memory/upkeep/consolidation/lexicon.py from the tuning split of the public set.

Run: `.venv/bin/python tests/data/build_consolidation_lexicon.py`. It reads
public_consolidation_set.json. A labelled duplicate pair
whose canonical tokens differ in exactly one word on each side gives a synonym pair ("kid" /
"child", English only); a labelled trap that differs so gives a contrast pair ("sitting" /
"standing"). A pair seen as both is a contrast (keeping two memories apart is the safe
mistake). Only the tuning split is read: the held-out split measures what the learned pairs do
on text they never saw.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory.upkeep.consolidation.similarity import fingerprint, swap
from tests.public_consolidation import public_store

OUT = Path(__file__).resolve().parents[2] / "memory" / "consolidation" / "lexicon.py"
HEADER = (
    '"""Word pairs learned from labelled duplicates and traps (tests/data/'
    "build_consolidation_lexicon.py\nwrites this file from the tuning split of tests/data/"
    "public_consolidation_set.json): a synonym\nswap counts as the same words, a contrast swap "
    'keeps two memories apart."""\n'
)


def learn() -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    store = public_store("tuning")
    prints = {i: fingerprint(text) for i, text in store.texts.items()}
    synonyms = {swap(prints[g[0]], prints[g[1]]) for g in store.groups if len(g) == 2}
    contrasts = {swap(prints[a], prints[b]) for a, b in store.traps}
    synonyms.discard(None)
    contrasts.discard(None)
    # Chinese tokens are characters and bigrams: one differing bigram is a cut, not a word.
    words = {pair for pair in synonyms if pair is not None and all(w.isascii() for w in pair)}
    return words - contrasts, contrasts  # type: ignore[return-value]


def render(name: str, pairs: set[tuple[str, str]]) -> str:
    body = "".join(f"    ({a!r}, {b!r}),\n" for a, b in sorted(pairs))
    return f"\n{name}: frozenset[tuple[str, str]] = frozenset({{\n{body}}})  # fmt: skip\n"


def main() -> None:
    synonyms, contrasts = learn()
    OUT.write_text(
        HEADER + render("LEARNED_SYNONYMS", synonyms) + render("LEARNED_CONTRASTS", contrasts),
        encoding="utf-8",
    )
    print(f"{len(synonyms)} synonym pairs, {len(contrasts)} contrast pairs -> {OUT}")


if __name__ == "__main__":
    main()
