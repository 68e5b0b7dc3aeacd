"""How well the memory writer keeps what matters on the labelled turns of tests/data/writer_set.json
(built by bench/build_writer_set.py from public dialogue data): the offline rules against real
local models (make local-model), with the tools and the json protocol side by side.

    .venv/bin/python bench/writer_quality.py --systems offline,1.5b:json,1.5b:tools

Per system and split (dev, heldout): extraction recall (a fact turn left a memory holding one of
its gold words) and precision (memories of fact turns that hold one), updates correct (the new
value stored, the old one gone), deletions honoured, junk (memories left by small talk; "as
deployed": only from the small talk the admission scorer sends to the writer), failed
turns (the writer gave up: retried later in a deployment) and seconds per writer turn (the
prompt tokens of each protocol: bench/prompt_tokens.py). A local model is served by
scripts/local_model.sh on a free port at temperature 0 for the length of its runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "writer_set.json"


@dataclass
class Tally:
    fact_cases: int = 0
    facts_kept: int = 0
    fact_memories: int = 0
    fact_memories_on_topic: int = 0
    small_talk_cases: int = 0
    junk_memories: int = 0
    junk_admitted: int = 0  # of those, from turns admission sends on (the rest never reach it)
    updates: int = 0
    updates_correct: int = 0
    forgets: int = 0
    forgets_honoured: int = 0
    turns: int = 0
    failed_turns: int = 0
    seconds: list[float] = field(default_factory=list)

    def row(self) -> str:
        def ratio(a: int, b: int) -> str:
            return f"{a / b:.2f} ({a}/{b})" if b else "-"

        per_turn = sum(self.seconds) / len(self.seconds) if self.seconds else 0.0
        return " | ".join([
            ratio(self.facts_kept, self.fact_cases),
            ratio(self.fact_memories_on_topic, self.fact_memories),
            ratio(self.updates_correct, self.updates), ratio(self.forgets_honoured, self.forgets),
            f"{self.junk_memories}/{self.small_talk_cases}",
            f"{self.junk_admitted}/{self.small_talk_cases}",
            ratio(self.failed_turns, self.turns), f"{per_turn:.1f}",
        ])  # fmt: skip


HEADER = (
    "recall | precision | updates | deletions | junk/small-talk | junk as deployed "
    "| failed turns | s/turn"
)


def holds(memories: list[str], words: list[str]) -> bool:
    return any(w.lower() in m.lower() for m in memories for w in words)


async def run_case(case: dict[str, Any], model: Any, protocol: str, tally: Tally) -> None:
    from memory.admission import score_turn
    from memory.long_term import LongTermMemory
    from memory.store.backends.yaml_files import YamlMemoryManager
    from memory.writer.consumer import MemoryConsumer, MemoryWriteFailed
    from memory.writer.turn import Turn

    with tempfile.TemporaryDirectory() as folder:
        manager = YamlMemoryManager(Path(folder), "bench")
        memory = LongTermMemory(manager)
        consumer = MemoryConsumer(model, protocol=protocol, timeout_seconds=600)
        after_first: list[str] = []
        for number, text in enumerate(case["turns"]):
            messages = ({"role": "user", "content": text}, {"role": "assistant", "content": "OK."})
            turn = Turn("bench", f"{case['id']}-{number}", messages, thread_id="bench")
            started = time.monotonic()
            tally.turns += 1
            try:
                await consumer.consume(turn, memory.write_target)
            except MemoryWriteFailed as exc:
                tally.failed_turns += 1
                logging.getLogger("bench").info("%s: %s", case["id"], exc)
            tally.seconds.append(time.monotonic() - started)
            if number == 0:
                after_first = live(manager)
        stored = live(manager)
    kind = case["kind"]
    if kind == "fact":
        tally.fact_cases += 1
        tally.facts_kept += holds(stored, case["gold"])
        tally.fact_memories += len(stored)
        tally.fact_memories_on_topic += sum(holds([m], case["gold"]) for m in stored)
    elif kind == "small_talk":
        tally.small_talk_cases += 1
        tally.junk_memories += len(stored)
        # As deployed, the admission scorer goes first and a skipped turn never reaches the writer.
        if any(score_turn(text, after="OK.").admitted for text in case["turns"]):
            tally.junk_admitted += len(stored)
    elif kind == "update":
        tally.updates += 1
        tally.updates_correct += holds(stored, case["gold"]) and not holds(stored, case["gone"])
    else:
        tally.forgets += 1
        # Honoured: it was stored, then it is gone (a fact never stored proves nothing).
        tally.forgets_honoured += holds(after_first, case["gone"]) and not holds(
            stored, case["gone"]
        )


def live(manager: Any) -> list[str]:
    from memory.store.backends.yaml_files import YamlMemoryManager

    fresh = YamlMemoryManager(manager.directory, manager.user_id)
    return [item.description for item in fresh.list_items().values()]


class Server:
    """scripts/local_model.sh serve <size> on a free port at temperature 0."""

    def __init__(self, size: str) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        env = {**os.environ, "PORT": str(port), "LOCAL_MODEL_TEMP": "0"}
        self.process = subprocess.Popen(
            ["bash", "scripts/local_model.sh", "serve", size], cwd=ROOT, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 300
        while not self.healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the {size} model's server did not start (make local-model?)")
            time.sleep(1)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.base}/health", timeout=2) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def stop(self) -> None:
        """SIGTERM, then SIGKILL to its group: a request the bench gave up on may still be
        generating, and llama-server finishes it before it stops."""
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


async def run_cases(
    cases: list[dict[str, Any]], model: Any, protocol: str, tallies: dict[str, Tally]
) -> None:
    """Every case on one event loop: the model's HTTP client belongs to the loop it first ran
    on (one loop per case failed every other case with "Event loop is closed")."""
    for case in cases:
        await run_case(case, model, protocol, tallies[case["split"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", default="offline,1.5b:json,1.5b:tools")
    parser.add_argument("--kinds", default="fact,small_talk,update,forget")
    parser.add_argument("--limit", type=int, default=0, help="cases per kind (0: all)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    from memory.integration.models.loading import load_chat_model
    from memory.writer.protocols import forget_protocol_choices

    cases = json.loads(SET.read_text())
    kinds = args.kinds.split(",")
    chosen = []
    for kind in kinds:
        of_kind = [c for c in cases if c["kind"] == kind]
        chosen += of_kind[: args.limit] if args.limit else of_kind
    print(f"{len(chosen)} cases from {SET.name}; columns: {HEADER}")
    for system in args.systems.split(","):
        size, _, protocol = system.partition(":")
        server = None
        if size == "offline":
            model, protocol = load_chat_model("offline/rules"), "tools"
        else:
            server = Server(size)
            os.environ["OPENAI_BASE_URL"] = f"{server.base}/v1"
            model = load_chat_model("openai/local", timeout=600, max_retries=0)
        tallies = {"dev": Tally(), "heldout": Tally()}
        forget_protocol_choices()  # each system starts as a new process would (auto: on tools)
        try:
            asyncio.run(run_cases(chosen, model, protocol or "json", tallies))
            for split, tally in tallies.items():
                print(f"{system:12} {split:8} {tally.row()}", flush=True)
        finally:
            if server is not None:
                server.stop()


if __name__ == "__main__":
    main()
