"""Recall@5/@10 on every kind of history (issue 31): each set of tests/data/recall_sets/ and
memorybank_set.json, tuning and held-out split side by side: plain BM25, the vector channel alone
(the fusion's own channel, read with the fusion's query) and the default fused retrieval, all
three in the same run over the same stores (issue 46: the fusion never below its own channels).

    .venv/bin/python bench/recall_kinds.py                       # every set (a few minutes)
    .venv/bin/python bench/recall_kinds.py --sets statements_spc_en,dialogue_memorybank_zh
    .venv/bin/python bench/recall_kinds.py --limit 30            # 30 questions a split
    .venv/bin/python bench/recall_kinds.py --types               # also a row per question type
    .venv/bin/python bench/recall_kinds.py --weights embedding=1.0  # another fusion setting
    .venv/bin/python bench/recall_kinds.py --embeddings mymodule:MyEmbeddings  # another model
    .venv/bin/python bench/recall_kinds.py --json figures.json   # the figures as JSON too

Each pool of a set (a user, a chat, a language) is its own SQLite store in a temporary folder;
memories keep the day they were said (undated ones: 2024-01-01) and their conversation
(thread). `LongTermMemory` is opened over the store twice: with the default embeddings (the
offline model; the bench waits until every vector is made) and with embeddings off (BM25
alone). `--embeddings module:attr` puts another model in the fused column: `attr` is an object
with LangChain's `embed_documents`/`embed_query` (memory.retrieval.embedder.TextEmbeddings), or
a class or factory called without arguments to make one, so that any embedder is compared on
the same sets, splits and BM25 column as the default. Each question goes through
`get_related_memory_from(question, "mechanical", 10)`, the path of a chat turn. A question
counts at k when any of its gold memories is in the first k (`all@10`: every gold memory in the
first 10). The date a question was asked is in the sets but not used: retrieval reads the clock.
REALTALK's text is read from REALTALK_DIR (default /work/coord/data/realtalk),
statements_convai2rev_en's lines and questions from CONVAI2_DIR (default
/work/coord/data/convai2_revised), events_coviddialog_zh's descriptions and questions from
COVIDDIALOG_DIR (default /work/coord/data/coviddialog); see tests/data/README.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import inspect
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "data"))

from build_recall_sets import convai2_episodes, coviddialog_question, coviddialog_records

from memory.long_term import LongTermMemory
from memory.retrieval.embedder import DEFAULT, TextEmbeddings, embeddings_name
from memory.retrieval.evaluation import write_items
from memory.retrieval.fusion import DEFAULT_WEIGHTS, FusionWeights
from memory.store.backends.sqlite_db import SqliteMemoryManager
from memory.store.item import MAX_DESCRIPTION_CHARS, MemoryItem

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
SETS = DATA / "recall_sets"
SPLITS = ("tuning", "held-out")
UNDATED = "2024-01-01T12:00:00+00:00"
THEME = {"chats": "conversation", "statements": "conversation", "assistant": "conversation",
         "dialogue": "conversation", "events": "event"}  # fmt: skip


def memorybank_sets() -> dict[str, dict[str, Any]]:
    """tests/data/memorybank_set.json in the common format: one pool per language (every
    user's turns: the other users' are distractors), a user's day its thread."""
    data = json.loads((DATA / "memorybank_set.json").read_text(encoding="utf-8"))
    sets: dict[str, dict[str, Any]] = {}
    for number, user in enumerate(data["users"]):
        lang = user["lang"]
        found = sets.setdefault(f"dialogue_memorybank_{lang}", {
            "kind": "dialogue", "lang": lang, "memories": [], "queries": [],
            "licence": "MIT", "source": "memorybank_set.json"})  # fmt: skip
        prefix = f"u{number:02d}-"
        for raw in user["memories"]:
            day = raw["id"].split("/")[0]
            found["memories"].append({
                "id": prefix + raw["id"].replace("/", "-"), "text": raw["description"],
                "said_at": f"{raw['description'][:10]}T12:00:00+00:00",
                "thread": prefix + day, "pool": lang})  # fmt: skip
        for raw in user["queries"]:
            found["queries"].append({
                "id": raw["id"], "question": raw["query"], "asked_at": None,
                "relevant": [prefix + r.replace("/", "-") for r in raw["relevant"]],
                "type": "dialogue", "split": user["split"], "pool": lang})  # fmt: skip
    return sets


def raw_folder(source: dict[str, Any], holds: str) -> Path:
    """Where a set's text is read from: the folder its `env` variable names, else `dir`."""
    folder = Path(os.environ.get(source.get("env", ""), source["dir"]))
    if not folder.exists():
        raise FileNotFoundError(f"{folder} holds no {holds}: see tests/data/README.md")
    return folder


def realtalk_texts(source: dict[str, Any], data: dict[str, Any]) -> None:
    """Fills a REALTALK set's memory texts (ids `<chat>/<dia_id>`) from REALTALK_DIR."""
    folder = raw_folder(source, "REALTALK chats")
    texts = {}
    for path in sorted(folder.glob("Chat_*.json")):
        chat = json.loads(path.read_text(encoding="utf-8"))
        for key, lines in chat.items():
            if key.startswith("session_") and key[8:].isdigit():
                for line in lines:
                    text = str(line.get("clean_text") or "").strip()
                    if text:
                        texts[f"{path.stem}/{line['dia_id']}"] = f"{line['speaker']}: {text}"
    for memory in data["memories"]:
        memory["text"] = texts[memory["id"]]


def convai2_texts(source: dict[str, Any], data: dict[str, Any]) -> None:
    """Fills a ConvAI2 set's memory texts (ids `<user>/e<episode>/<turn>`: the persona holder's
    line of that turn in the original file) and questions (ids `<user>/e<episode>/p<n>`: the
    n-th revised persona sentence, put into source["question"]) from CONVAI2_DIR."""
    folder = raw_folder(source, "ConvAI2 files")
    original = convai2_episodes(folder / "valid_self_original_no_cands.txt")
    revised = convai2_episodes(folder / "valid_self_revised_no_cands.txt")
    for memory in data["memories"]:
        _, episode, turn = memory["id"].rsplit("/", 2)
        memory["text"] = original[int(episode[1:])]["lines"][int(turn)]
    for query in data["queries"]:
        _, episode, position = query["id"].rsplit("/", 2)
        sentence = revised[int(episode[1:])]["persona"][int(position[1:])].rstrip(".!")
        query["question"] = source["question"].format(sentence)


def coviddialog_texts(source: dict[str, Any], data: dict[str, Any]) -> None:
    """Fills a COVID-Dialogue set's memory texts (ids ending in `c<N>`: the 病情描述 of
    consultation N) and questions (ids ending in `c<N>/q`: the patient's first two messages of
    consultation N) from COVIDDIALOG_DIR."""
    path = raw_folder(source, "COVID-Dialogue file") / source["file"]
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: see tests/data/README.md")
    records = coviddialog_records(path)
    for memory in data["memories"]:
        memory["text"] = records[memory["id"].rsplit("/c", 1)[1]]["situation"]
    for query in data["queries"]:
        number = query["id"].rsplit("/c", 1)[1].removesuffix("/q")
        query["question"] = coviddialog_question(records[number]["said"])


# The sets whose text is not committed (no licence stated): each format's reader fills it in.
TEXT_FILLERS: dict[str, Callable[[dict[str, Any], dict[str, Any]], None]] = {
    "realtalk": realtalk_texts,
    "convai2": convai2_texts,
    "coviddialog": coviddialog_texts,
}


def load_sets() -> dict[str, dict[str, Any]]:
    sets = memorybank_sets()
    for path in sorted(SETS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        source = data.get("text_source")
        try:
            if source:
                TEXT_FILLERS[source["format"]](source, data)
        except FileNotFoundError as missing:  # a set without committed text, not fetched here
            print(f"{path.stem}: left out, {missing}", file=sys.stderr)
            continue
        sets[path.stem] = data
    return dict(sorted(sets.items()))


def item_of(memory: dict[str, Any], kind: str) -> MemoryItem:
    origin = {"thread_id": memory["thread"]} if memory.get("thread") else None
    item = MemoryItem.create(memory["text"][:MAX_DESCRIPTION_CHARS], THEME.get(kind, "note"),
                             "recall set", origin=origin)  # fmt: skip
    stamp = memory.get("said_at") or UNDATED
    if "+" not in stamp[10:] and not stamp.endswith("Z"):
        stamp = datetime.fromisoformat(stamp).astimezone().isoformat()
    item.latest_update_time = stamp
    item.history[-1]["time"] = stamp
    return item


def chosen(queries: list[dict[str, Any]], limit: int | None) -> list[dict[str, Any]]:
    """The first `limit` questions of a split in the order of a hash of their id."""
    ordered = sorted(queries, key=lambda q: hashlib.sha1(q["id"].encode()).hexdigest())
    return ordered if limit is None else ordered[:limit]


def load_embeddings(spec: str) -> TextEmbeddings:
    """`module:attr` → the embeddings object it names (a class or factory is called)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        sys.exit(f"--embeddings {spec!r}: expected module:attr")
    found: Any = getattr(importlib.import_module(module_name), attr)
    if inspect.isclass(found) or (callable(found) and not isinstance(found, TextEmbeddings)):
        found = found()
    if not isinstance(found, TextEmbeddings):
        sys.exit(f"--embeddings {spec!r}: {type(found).__name__} has no "
                 "embed_documents/embed_query")  # fmt: skip
    return found


def run_set(
    data: dict[str, Any],
    limit: int | None,
    folder: Path,
    weights: FusionWeights = DEFAULT_WEIGHTS,
    embeddings: Any = DEFAULT,
) -> dict[str, list[dict]]:
    """Each asked question's ranks under the three retrievals: {split: [{type, relevant, bm25,
    vector, fused}]}; only pools holding an asked question are loaded."""
    asked = [
        q
        for split in SPLITS
        for q in chosen([q for q in data["queries"] if q["split"] == split], limit)
    ]
    by_pool: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in asked:
        by_pool[query["pool"]].append(query)
    memories: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for memory in data["memories"]:
        if memory["pool"] in by_pool:
            memories[memory["pool"]].append(memory)
    results: dict[str, list[dict]] = defaultdict(list)
    for number, pool in enumerate(sorted(by_pool)):
        where = folder / f"p{number}"
        manager = SqliteMemoryManager(where / "memory.db", pool)
        write_items(manager, {m["id"]: item_of(m, data["kind"]) for m in memories[pool]})
        fused = LongTermMemory(manager, data_dir=where, embeddings=embeddings)
        if fused.retrievers.mechanical.fused is not None:
            fused.retrievers.mechanical.fused.weights = weights
        plain = LongTermMemory(manager, data_dir=where, embeddings="off")
        if not fused.retrievers.catch_up(max_missing=10**9, timeout=3600):
            sys.exit(f"pool {pool}: the semantic vectors were not all made")
        for query in by_pool[pool]:
            ranks = {}
            for name, memory in (("bm25", plain), ("fused", fused)):
                found = memory.get_related_memory_from(query["question"], "mechanical", 10)
                ranks[name] = [r["id"] for r in found]
            ranks["vector"] = vector_alone(fused, query["question"])
            results[query["split"]].append(
                {"type": query["type"], "relevant": set(query["relevant"]), **ranks}
            )
        plain.close()
        fused.close()
    return results


def vector_alone(memory: LongTermMemory, question: str, limit: int = 10) -> list[str]:
    """The fused retrieval's vector channel alone: its 10 nearest memories for the text the
    fusion embeds for `question`."""
    retriever = memory.retrievers.mechanical
    if retriever.fused is None:
        return []
    index = retriever.index()
    text = retriever.fused.embedded_query(question)
    return [index.entries[p].id for p in retriever.fused.channel.similar(index, text, limit)]


def scores(rows: list[dict], name: str) -> tuple[float, float, float]:
    if not rows:
        return (float("nan"),) * 3

    def share(hit: Any) -> float:
        return sum(1 for row in rows if hit(row)) / len(rows)

    return (share(lambda r: bool(r["relevant"] & set(r[name][:5]))),
            share(lambda r: bool(r["relevant"] & set(r[name][:10]))),
            share(lambda r: r["relevant"] <= set(r[name][:10])))  # fmt: skip


def line(label: str, rows: list[dict]) -> str:
    b5, b10, _ = scores(rows, "bm25")
    v5, v10, _ = scores(rows, "vector")
    f5, f10, fall = scores(rows, "fused")
    below = "  < channel" if f5 < max(b5, v5) - 1e-9 or f10 < max(b10, v10) - 1e-9 else ""
    return (
        f"{label:<34} {len(rows):>5} | {b5:6.3f} {b10:6.3f} | {v5:6.3f} {v10:6.3f} | "
        f"{f5:6.3f} {f10:6.3f} {fall:6.3f} | {f5 - max(b5, v5):+6.3f} {f10 - max(b10, v10):+6.3f}"
        f"{below}"
    )


def figures(rows: list[dict]) -> dict[str, float | int]:
    """One split's (or question type's) figures for --json: n and recall@5/@10 per column."""
    found: dict[str, float | int] = {"n": len(rows)}
    for name in ("bm25", "vector", "fused"):
        at5, at10, _ = scores(rows, name)
        found[f"{name}@5"], found[f"{name}@10"] = round(at5, 4), round(at10, 4)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        help="questions per split and set (the first by a hash of their id)",
    )
    parser.add_argument("--types", action="store_true", help="a row per question type too")
    parser.add_argument("--weights", default="", help="the fused column with other FusionWeights, "
                        "e.g. embedding=1.0,bare_question=1.0")  # fmt: skip
    parser.add_argument(
        "--embeddings",
        default="",
        metavar="MODULE:ATTR",
        help="the fused column with these embeddings instead of the default offline model "
        "(an object, or a class or factory making one, with embed_documents/embed_query)",
    )
    parser.add_argument(
        "--json", default="", metavar="PATH", help="also write the figures there, as JSON"
    )
    args = parser.parse_args()
    embeddings: Any = load_embeddings(args.embeddings) if args.embeddings else DEFAULT
    if args.embeddings:
        print(f"fused with embeddings {embeddings_name(embeddings)} ({args.embeddings})")
    weights = dataclasses.replace(DEFAULT_WEIGHTS, **{
        key: type(getattr(DEFAULT_WEIGHTS, key))(value)
        for key, value in (pair.split("=") for pair in args.weights.split(",") if pair)
    })  # fmt: skip
    if weights != DEFAULT_WEIGHTS:
        print(f"fused with {weights}")
    started = time.perf_counter()
    sets = load_sets()
    if args.sets:
        unknown = set(args.sets.split(",")) - set(sets)
        if unknown:
            sys.exit(f"unknown sets {sorted(unknown)}; known: {', '.join(sets)}")
        sets = {name: sets[name] for name in args.sets.split(",")}
    if args.limit is not None:
        print(f"--limit {args.limit}: the first {args.limit} questions of each split by a hash "
              "of their id (a subsample)")  # fmt: skip
    header = (
        f"{'set / split':<34} {'n':>5} | {'BM25@5':>6} {'@10':>6} | {'vec@5':>6} {'@10':>6} | "
        f"{'fused@5':>6} {'@10':>6} {'all@10':>6} | {'-best@5':>6} {'@10':>6}"
    )
    rows_out = []
    found: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, data in sets.items():
            began = time.perf_counter()
            results = run_set(data, args.limit, Path(folder) / name, weights, embeddings)
            pools = len({m["pool"] for m in data["memories"]})
            print(
                f"{name} ({data['kind']}, {data['lang']}): {len(data['memories'])} memories "
                f"in {pools} pools, {time.perf_counter() - began:.0f} s",
                flush=True,
            )
            found[name] = {"lang": data["lang"], "kind": data["kind"]}
            for split in SPLITS:
                rows_out.append(line(f"{name} {split}", results[split]))
                types = sorted({r["type"] for r in results[split]})
                found[name][split] = {**figures(results[split]), "types": {
                    kind: figures([r for r in results[split] if r["type"] == kind])
                    for kind in types}}  # fmt: skip
                if args.types:
                    for kind in types if len(types) > 1 else []:
                        rows_out.append(line(f"  {kind}", [r for r in results[split]
                                                           if r["type"] == kind]))  # fmt: skip
    print()
    print("any gold memory in the first k; all@10: every gold memory in the first 10;")
    fused_with = f"embeddings={args.embeddings}" if args.embeddings else "the default"
    print(f"BM25 = LongTermMemory(embeddings='off'), vec = the fused retrieval's vector channel "
          f"alone, fused = {fused_with}, same stores")  # fmt: skip
    print("-best = fused minus the better channel; '< channel': the fusion below one of them")
    print(header)
    print("-" * len(header))
    print("\n".join(rows_out))
    print(f"\n{time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
