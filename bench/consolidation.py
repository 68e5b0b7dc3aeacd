"""The consolidation pass: its time at 1k, 10k and 100k memories, the threshold sweep on the
planted set, and its effect on retrieval recall.

Run: `.venv/bin/python bench/consolidation.py` (a few minutes; `--quick` stops at 10k,
`--public` prints the public set's figures alone; `--confirm-with openai/local` adds a row where
that model confirms the borderline pairs by meaning, e.g. the local model of `make local-serve`
with OPENAI_BASE_URL set).

Scaling: each size is a planted store (tests/consolidation_data.py: 15% of the memories in
duplicate groups, half Chinese, with look-alike traps) in a real SQLite file. Detection (the
candidate pairs from the inverted index over each memory's rarest tokens, the similarity check,
union-find) is timed alone, then the whole pass (snapshot, plan, every apply). The ratio of
each size's time to the 1k time is printed beside the ratio of sizes: linear scaling keeps
them close; all-pairs comparison would grow with the square (100x at 10k, 10,000x at 100k).
Quality: groups found whole, pairwise precision and traps merged for a grid of thresholds.
Public: tests/data/public_consolidation_set.json (memories other people wrote, labelled by the
sources: tests/data/README.md), tuning and held-out side by side, by words alone and with the
offline embedding model; groups merged (target >= 0.9), distinct kept (>= 0.98), traps merged (0).
Semantic scaling: the search for near pairs by meaning and their confirmation at each size, on
token-hash vectors standing in for the model's (similar texts get similar vectors); the model's
own encoding time is measured apart, per memory, on the public store (it is linear).
Recall: tests/data/retrieval_set.json padded with a duplicate of every memory (and another of
every other one) and 600 planted memories; BM25 recall@5 by fact (a fact is found when any of
its copies is) before and after one pass. It must not drop.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hashlib
from unittest.mock import patch

import numpy as np

from memory import LongTermMemory
from memory.prompts.consolidation import SAME_FACT_PROMPTS
from memory.retrieval import MechanicalRetriever
from memory.retrieval.embedder import OfflineEncoder
from memory.retrieval.evaluation import load_labelled_set, write_items
from memory.store.factory import open_memory_manager
from memory.store.item import MemoryItem
from memory.upkeep.consolidation import semantic, similarity
from tests.consolidation_data import planted_set, score
from tests.public_consolidation import SPLITS, PublicStore, figures, public_store

LABELLED = Path(__file__).resolve().parents[1] / "tests" / "data" / "retrieval_set.json"
SIZES = (1_000, 10_000, 100_000)
K = 5


def scaling(sizes: tuple[int, ...]) -> None:
    print("== pass time by store size (SQLite, planted set: 15% in duplicate groups)")
    print(
        f"{'memories':>9} {'pairs checked':>14} {'detect s':>9} {'x1k':>6} {'pass s':>8} "
        f"{'x1k':>6} {'merged':>7} {'groups ok':>9} {'precision':>9}"
    )
    base: tuple[float, float] | None = None
    for size in sizes:
        planted = planted_set(total=size, groups=size * 15 // 100, seed=size)
        texts = {i: text for i, (text, _) in planted.memories.items()}
        pairs = similarity.candidate_pairs({i: similarity.fingerprint(t) for i, t in texts.items()})
        started = time.perf_counter()
        groups = similarity.duplicate_groups(texts)
        detect = time.perf_counter() - started
        with tempfile.TemporaryDirectory() as folder:
            manager = open_memory_manager(f"sqlite:{folder}/memory.db", "bench")
            items = {i: MemoryItem.create(t, th, "seed") for i, (t, th) in planted.memories.items()}
            write_items(manager, items)
            started = time.perf_counter()
            report = LongTermMemory(manager, embeddings="off").consolidate()
            whole = time.perf_counter() - started
        found = [[survivor, *ids] for survivor, ids in report.merged.items()]
        groups_ok, precision, _ = score(planted, found)
        base = base or (detect, whole)
        print(
            f"{size:>9,} {len(pairs):>14,} {detect:>9.2f} {detect / base[0]:>6.1f} "
            f"{whole:>8.2f} {whole / base[1]:>6.1f} {report.removed:>7,} {groups_ok:>9.3f} "
            f"{precision:>9.3f}"
        )
        assert len(groups) == len(report.merged) or report.skipped, "detection and pass differ"


def token_hash_vectors(texts: list[str], dimensions: int = 512) -> np.ndarray:
    """Unit vectors from hashed canonical tokens: a cheap stand-in with the model's shape."""
    rows = np.zeros((len(texts), dimensions), dtype=np.float32)
    for row, text in enumerate(texts):
        for token in similarity.fingerprint(text).tokens:
            digest = int(hashlib.md5(token.encode("utf-8")).hexdigest()[:8], 16)
            rows[row, digest % dimensions] += 1.0 if digest & 1 else -1.0
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)


def semantic_scaling(sizes: tuple[int, ...]) -> None:
    print("\n== duplicates by meaning: near-pair search + confirmation by store size")
    print(f"{'memories':>9} {'near pairs':>11} {'search s':>9} {'x1k':>6} {'all-pairs would':>16}")
    base = 0.0
    for size in sizes:
        planted = planted_set(total=size, groups=size * 15 // 100, seed=size)
        texts = {i: text for i, (text, _) in planted.memories.items()}
        vectors = token_hash_vectors(list(texts.values()))
        started = time.perf_counter()
        near = semantic.near_pairs(vectors, semantic.SEMANTIC_BORDERLINE)
        similarity.duplicate_groups(texts, vectors=vectors)
        elapsed = time.perf_counter() - started
        base = base or elapsed
        print(f"{size:>9,} {len(near):>11,} {elapsed:>9.2f} {elapsed / base:>6.1f} "
              f"{size * (size - 1) // 2:>16,}")  # fmt: skip


def public(confirm_with: str = "") -> None:
    print("\n== public set (other people's words): tuning | held-out")
    print(f"{'lang':5} {'method':9} {'groups':>7} {'merged':>7} {'distinct kept':>13} {'traps':>6}"
          f" | {'groups':>7} {'merged':>7} {'distinct kept':>13} {'traps':>6}")  # fmt: skip
    encoder = OfflineEncoder() if OfflineEncoder.available() else None
    results: dict[tuple[str, str], list[str]] = {}
    for split in SPLITS:
        store = public_store(split)
        found = {"words": similarity.duplicate_groups(store.texts)}
        if encoder is not None:
            started = time.perf_counter()
            vectors = semantic.embed(encoder, list(store.texts.values()))
            per_memory = (time.perf_counter() - started) / len(store.texts) * 1000
            found["meaning"] = similarity.duplicate_groups(store.texts, vectors=vectors)
            # What a pass embeds: the semantic channel's text, theme and description (the set
            # has no themes: one for all, the case where the shared prefix counts the most).
            themed = semantic.embed(encoder, [f"fact: {t}" for t in store.texts.values()])
            found["themed"] = similarity.duplicate_groups(store.texts, vectors=themed)
            if confirm_with:
                from memory.integration.models.loading import load_chat_model

                llm = load_chat_model(confirm_with, timeout=120, max_retries=0)
                started = time.perf_counter()
                found["+model"] = similarity.duplicate_groups(store.texts, vectors=vectors, llm=llm)
                print(f"  {split}: the model's checks took {time.perf_counter() - started:.0f} s")
                # Not adopted (docs/CONSOLIDATION.md): the Chinese pairs asked in English.
                with patch.dict(SAME_FACT_PROMPTS, zh=SAME_FACT_PROMPTS["en"]):
                    found["+model en"] = similarity.duplicate_groups(
                        store.texts, vectors=vectors, llm=llm
                    )
                    asked_in_english = raw_answers(store, llm)
                in_chinese = raw_answers(store, llm)
                print(f"  {split}: the model's yes to the first 40 Chinese groups / traps: "
                      f"asked in Chinese {in_chinese}, in English {asked_in_english}")  # fmt: skip
            print(f"  {split}: {len(store.texts)} memories embedded, {per_memory:.1f} ms each")
        for method, groups in found.items():
            for lang in ("en", "zh", ""):
                f = figures(store, groups, lang)
                results.setdefault((lang or "both", method), []).append(
                    f"{f.groups:>7} {f.groups_merged:>7.3f} {f.distinct_kept:>13.3f} "
                    f"{f.traps_merged:>6}"
                )
    for (lang, method), columns in results.items():
        print(f"{lang:5} {method:9} " + " | ".join(columns))


def raw_answers(store: PublicStore, llm: object, count: int = 40) -> str:
    """How often the model says "same" to Chinese duplicate pairs and to trap pairs, before any
    guard: a judge that says yes to both cannot confirm anything."""
    chinese = [g[:2] for g in store.groups if store.languages[g[0]] == "zh"][:count]
    traps = [t for t in store.traps if store.languages[t[0]] == "zh"][:count]
    yes = [sum(semantic.model_says_same(llm, store.texts[a], store.texts[b]) for a, b in pairs)
           for pairs in (chinese, traps)]  # fmt: skip
    return f"{yes[0]}/{len(chinese)} / {yes[1]}/{len(traps)}"


def kept_vectors(size: int = 2_000) -> None:
    """A pass keeps its vectors beside retrieval's: the first pass on a store embeds every
    memory, a later one only the new ones (here none); the store has no duplicates, so the two
    passes do the same work but for the embedding."""
    if not OfflineEncoder.available():
        return
    from memory.upkeep.consolidation.run import embeddings_of

    planted = planted_set(
        total=size, groups=0, seed=3
    )  # nothing to merge: passes differ by vectors
    print(f"\n== kept vectors: passes at {size:,} memories (SQLite, the offline model)")
    with tempfile.TemporaryDirectory() as folder:
        manager = open_memory_manager(f"sqlite:{folder}/memory.db", "bench")
        write_items(manager, {i: MemoryItem.create(t, th, "seed")
                              for i, (t, th) in planted.memories.items()})  # fmt: skip
        memory = LongTermMemory(manager, embeddings="default", data_dir=folder)
        for label in ("first pass (nothing kept)", "second pass (vectors kept)",
                      "third pass (vectors kept)"):  # fmt: skip
            started = time.perf_counter()
            report = memory.consolidate()
            elapsed = time.perf_counter() - started
            made = embeddings_of(memory).embedded_count
            print(f"{label:28} {elapsed:>7.2f} s  {made:>6,} memories embedded so far, "
                  f"{report.removed} merged")  # fmt: skip


def sweep() -> None:
    planted = planted_set()
    texts = {i: text for i, (text, _) in planted.memories.items()}
    print("\n== thresholds on the planted set (1,000 memories, 150 groups, 75 traps)")
    print(f"{'contained':>9} {'swapped':>8} {'groups ok':>9} {'precision':>9} {'traps merged':>12}")
    for contained in (0.3, 0.5, 0.7):
        for swapped in (0.7, 0.8, 0.9, 1.01):
            found = similarity.duplicate_groups(texts, contained, swapped)
            groups_ok, precision, traps = score(planted, found)
            chosen = (
                " <- chosen"
                if (contained, swapped)
                == (similarity.CONTAINED_JACCARD, similarity.SWAPPED_JACCARD)
                else ""
            )
            figures = f"{groups_ok:>9.3f} {precision:>9.3f} {traps:>12}"
            print(f"{contained:>9} {swapped:>8} {figures}{chosen}")


def _copy(text: str, n: int) -> str:
    """A copy of a memory as people repeat themselves: another ending, an added "really"."""
    chinese = any("\u4e00" <= char <= "\u9fff" for char in text)
    bare = text.rstrip("。.!！ ")
    if n == 0:
        return bare + ("。" if chinese else ".") if bare == text else bare
    return (
        bare.replace("喜欢", "非常喜欢", 1)
        if chinese
        else bare.replace(" likes ", " really likes ", 1) + " "
    )


def recall() -> None:
    labelled = load_labelled_set(LABELLED)
    family: dict[str, str] = {}  # every id → the labelled memory it copies
    items = dict(labelled.items)
    for n, (memory_id, item) in enumerate(labelled.items.items()):
        family[memory_id] = memory_id
        for copy in range(1 if n % 2 else 2):  # at most 25% may go in one pass: not more
            copy_id = f"{memory_id}-copy{copy}"
            items[copy_id] = MemoryItem.create(_copy(item.description, copy), item.theme, "padding")
            family[copy_id] = memory_id
    planted = planted_set(total=600, groups=40, seed=7)
    items.update(
        {i: MemoryItem.create(t, th, "padding") for i, (t, th) in planted.memories.items()}
    )
    with tempfile.TemporaryDirectory() as folder:
        manager = open_memory_manager(f"sqlite:{folder}/memory.db", "bench")
        write_items(manager, items)

        def by_fact() -> float:
            retriever = MechanicalRetriever(manager)
            total = 0.0
            for query in labelled.queries:
                found = {family.get(r["id"], r["id"]) for r in retriever.retrieve(query.query, K)}
                total += len(found & set(query.relevant)) / len(query.relevant)
            return total / len(labelled.queries)

        before, live_before = by_fact(), len(manager.list_items())
        report = LongTermMemory(manager, embeddings="off").consolidate()
        after, live_after = by_fact(), len(manager.list_items())
    print(f"\n== BM25 recall@{K} by fact on the labelled set padded with duplicates")
    print(
        f"before: {before:.3f} ({live_before} memories)  after: {after:.3f} ({live_after} "
        f"memories, {report.removed} merged)  change: {after - before:+.3f}"
    )
    assert not report.refused, report.refused
    assert after >= before, "consolidation lowered recall"


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    if "--public" not in sys.argv:
        scaling(SIZES[:2] if quick else SIZES)
        semantic_scaling(SIZES[:2] if quick else SIZES)
        kept_vectors()
        sweep()
    model = sys.argv[sys.argv.index("--confirm-with") + 1] if "--confirm-with" in sys.argv else ""
    public(model)
    if "--kept" in sys.argv:
        kept_vectors()
    if "--public" not in sys.argv:
        recall()
