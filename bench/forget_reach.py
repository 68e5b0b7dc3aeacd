"""How far a forget reaches on conversations we did not write: Synthetic-Persona-Chat (Google,
CC-BY 4.0), each conversation archived, each of User 1's persona facts forgotten in turn.

Run: `.venv/bin/python bench/forget_reach.py [--limit 300]` with the dataset's `valid.csv` and
`test.csv` in /work/coord/data/synthetic-persona-chat/ (or `--data <folder>`).

No message is labelled, so this is not a precision/recall measure: it prints, per split, the
share of forgotten facts for which at least one of User 1's messages was hidden ("caught": in
these conversations User 1 talks about most of their persona facts), and how much of a
conversation one forgotten fact takes with it (the share of its messages hidden: median, mean,
and how often more than a quarter). Only the fingerprint rule runs here: the facts were never
written by a turn, so no message is hidden for being in the memory's history. Nothing was tuned
on either split (valid is listed first, test second).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.archive import ArchivedMessage
from memory.archive.reconcile import carrying_messages
from memory.archive.sqlite_archive import SqliteArchive
from memory.store.item import MemoryItem

DATA = Path("/work/coord/data/synthetic-persona-chat")


def conversations(path: Path, limit: int) -> list[tuple[list[str], list[tuple[str, str]]]]:
    csv.field_size_limit(10**9)
    found = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            personas = [p.strip() for p in row["user 1 personas"].splitlines() if p.strip()]
            turns = []
            for line in row["Best Generated Conversation"].splitlines():
                speaker, _, text = line.partition(":")
                if text.strip() and speaker.strip() in ("User 1", "User 2"):
                    role = "user" if speaker.strip() == "User 1" else "assistant"
                    turns.append((role, text.strip()))
            if personas and turns:
                found.append((personas, turns))
            if len(found) >= limit:
                break
    return found


def reach(path: Path, limit: int, folder: Path) -> None:
    caught, shares = 0, []
    facts = 0
    for number, (personas, turns) in enumerate(conversations(path, limit)):
        archive = SqliteArchive(folder / path.stem, f"u{number}")
        start = time.time() - 3600
        archive.add([
            ArchivedMessage(archive.user_id, "t", f"c{i}", f"m{i}", role, text, start + i, 0)
            for i, (role, text) in enumerate(turns)
        ])  # fmt: skip
        said = {m.ref: m for m in archive.messages()}
        for persona in personas:
            item = MemoryItem.create(persona, "persona")
            item.mark_deleted("forget")
            hidden = carrying_messages(archive, item)
            facts += 1
            caught += any(said[key].role == "user" for key in hidden)
            shares.append(len(hidden) / len(said))
        archive.close()
    over = sum(1 for share in shares if share > 0.25) / len(shares)
    print(f"{path.name}: {facts} facts forgotten in {limit} conversations")
    print(f"  caught (one of User 1's messages hidden): {caught / facts:.1%}")
    median, mean = statistics.median(shares), statistics.fmean(shares)
    print(
        f"  share of the conversation hidden per fact: median {median:.1%}, mean {mean:.1%}, "
        f"more than a quarter in {over:.1%} of the facts"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=300, help="conversations per split")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for split in ("valid.csv", "test.csv"):
            reach(args.data / split, args.limit, Path(folder))


if __name__ == "__main__":
    main()
