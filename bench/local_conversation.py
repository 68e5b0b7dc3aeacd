"""The local model as a new user meets it: issue 32's seven-turn conversation through `make chat`'s
LocalSession, run three times, then a question in a new thread.

Run: `make local-model`, then `.venv/bin/python bench/local_conversation.py` (about 2 minutes on
2 cores; 6 with `--load`, two busy processes taking both cores meanwhile); `--runs N`.

Each run is a new process, as a user starting `make chat` is: the README's local-model settings
(chat and writer on `openai/local`, the YAML backend, the local queue, admission on), a fresh data
folder, the 1.5B model (`--model 0.5b`) served by `make local-serve` at temperature 0. The seven
turns (a name, a job, small talk, a daughter and her age, a favourite fruit said in Chinese, thanks,
a forget) are sent one by one; the session then waits for the writer; then "What is my daughter's
name?" in a new thread. Per run: the live memories, which facts were kept (the name, the daughter,
the fruit), whether the job was forgotten, whether each memory is in the language of the turn it
came from (the fruit's in Chinese, the rest in English), the numbers and capitalised words a memory
holds that no turn does (invented details), the reply in the new thread, and each turn's first-token
and reply seconds. Then the same result over the runs: identical memories or not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from writer_quality import Server

ROOT = Path(__file__).resolve().parents[1]
TURNS = (
    "Hi, I'm Daniela Ortiz.",
    "I work as a veterinarian in Porto.",
    "The weather is lovely today, isn't it?",
    "My daughter Sofia turns seven next March.",
    "我最喜欢的水果是芒果。",
    "haha ok, thanks",
    "Please forget that I work as a veterinarian.",
)
QUESTION = "What is my daughter's name?"
# What a person expects kept, each with the words that show it and the language it was said in.
FACTS = {
    "name": (("daniela",), "en"),
    "daughter": (("sofia",), "en"),
    "fruit": (("芒果", "mango"), "zh"),
}
FORGOTTEN = ("veterinarian", "vet ", "兽医")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_DETAIL = re.compile(r"\d+|\b[A-Z][a-z]+\b")
# Capitalised words a memory may hold without a turn saying them: its own labels.
_LABELS = {"User", "The", "Her", "His", "She", "He", "They", "Their", "Is", "Has", "Works"}


def invented(description: str) -> list[str]:
    said = " ".join(TURNS).lower()
    found = [m.group() for m in _DETAIL.finditer(description) if m.group() not in _LABELS]
    return [word for word in found if word.lower() not in said]


async def one_run(data: Path) -> dict[str, Any]:
    """The conversation in this process (settings come from the environment `main` set)."""
    from graph.cli.session import LocalSession
    from graph.context import Context

    context = Context(user_id="daniela", model="openai/local", writer_model="openai/local")
    turns: list[dict[str, Any]] = []
    conversation_started, writer_wait = time.monotonic(), 0.0
    async with LocalSession(context, data) as session:
        session.exit_wait_seconds = 900
        for text in (*TURNS, None):
            thread = "first" if text is not None else "second"
            if text is None:  # the writer files the turns; then a new thread asks
                waited = time.monotonic()
                await session.wait_for_writes(timeout_seconds=900)
                writer_wait = time.monotonic() - waited
                written = time.monotonic() - conversation_started
                text = QUESTION
            started, first = time.monotonic(), 0.0

            def seen(_message: str, piece: str, started: float = started) -> None:
                nonlocal first
                if piece.strip():
                    first = first or time.monotonic() - started

            reply = (await session.say(thread, text, on_text=seen)).text
            turns.append({"said": text, "reply": reply, "first_token": first,
                          "seconds": time.monotonic() - started})  # fmt: skip
        memories = [item.description for item in session.manager.list_items().values()]
    # A whole turn: the seven replies and the writer filing them, until the last is written.
    return {"turns": turns, "memories": sorted(memories), "writer_wait": writer_wait,
            "whole_turn": written / len(TURNS)}  # fmt: skip


def judged(run: dict[str, Any]) -> dict[str, Any]:
    memories = run["memories"]
    kept = {}
    for fact, (words, language) in FACTS.items():
        holding = [m for m in memories if any(w in m.lower() for w in words)]
        in_language = all(bool(_CJK.search(m)) == (language == "zh") for m in holding)
        kept[fact] = {"kept": bool(holding), "language kept": bool(holding) and in_language}
    return {
        "facts": kept,
        "job forgotten": not any(w in m.lower() for m in memories for w in FORGOTTEN),
        "invented": {m: invented(m) for m in memories if invented(m)},
        "answers the question": "sofia" in run["turns"][-1]["reply"].lower(),
    }


def busy_cores(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes that keep a core busy each: another program taking the machine."""
    loop = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="1.5b", help="the local model: 1.5b or 0.5b")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--load", action="store_true", help="two busy processes meanwhile")
    parser.add_argument("--one-run", help=argparse.SUPPRESS)  # a data folder: one run, JSON out
    args = parser.parse_args()
    if args.one_run:
        print(json.dumps(asyncio.run(one_run(Path(args.one_run))), ensure_ascii=False))
        return
    server = Server(args.model)
    hogs = busy_cores(2) if args.load else []
    results = []
    try:
        for number in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory() as folder:
                env = {
                    **os.environ, "OPENAI_BASE_URL": f"{server.base}/v1",
                    "GULFSTREAM_MODEL": "openai/local", "GULFSTREAM_WRITER_MODEL": "openai/local",
                    "GULFSTREAM_MEMORY_BACKEND": f"yaml:{folder}/memory",
                    "GULFSTREAM_DATA_DIR": f"{folder}/data",
                }  # fmt: skip
                env.pop("OPENAI_API_KEY", None)
                started = time.monotonic()
                done = subprocess.run(
                    [sys.executable, __file__, "--one-run", f"{folder}/chat"], cwd=ROOT, env=env,
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                if done.returncode != 0:
                    raise SystemExit(f"run {number} failed:\n{done.stderr[-3000:]}")
                run = json.loads(done.stdout.strip().splitlines()[-1])
                run["wall"] = time.monotonic() - started
                # Why a fact was lost: the writer's failed attempts and dead letters.
                run["writer_failures"] = [line[:300] for line in done.stderr.splitlines()
                                          if "failed (attempt" in line or "dead-letter" in line
                                          or "paused" in line]  # fmt: skip
                results.append(run)
                report(number, run)
    finally:
        for hog in hogs:
            hog.kill()
        server.stop()
    same = len({json.dumps(r["memories"], ensure_ascii=False) for r in results}) == 1
    firsts = [t["first_token"] for r in results for t in r["turns"]]
    replies = [t["seconds"] for r in results for t in r["turns"]]
    whole = [r["whole_turn"] for r in results]
    print(f"== {len(results)} runs{' under load' if args.load else ''}: the same memories every "
          f"run: {same}; first token p50 {statistics.median(firsts):.1f} s, max "
          f"{max(firsts):.1f} s; reply p50 {statistics.median(replies):.1f} s, max "
          f"{max(replies):.1f} s; whole turn (replies and writing) p50 "
          f"{statistics.median(whole):.1f} s, max {max(whole):.1f} s")  # fmt: skip


def state(fact: dict[str, bool]) -> str:
    if not fact["kept"]:
        return "LOST"
    return "kept" if fact["language kept"] else "kept (WRONG LANGUAGE)"


def report(number: int, run: dict[str, Any]) -> None:
    verdict = judged(run)
    print(f"== run {number} ({run['wall']:.0f} s; a whole turn {run['whole_turn']:.1f} s, the "
          f"writer done {run['writer_wait']:.1f} s after the last reply)")  # fmt: skip
    for memory in run["memories"]:
        print(f"  memory: {memory}")
    facts = ", ".join(f"{fact} {state(v)}" for fact, v in verdict["facts"].items())
    print(f"  {facts}; job forgotten: {verdict['job forgotten']}; invented: "
          f"{verdict['invented'] or 'none'}; new thread answered: "
          f"{verdict['answers the question']}")  # fmt: skip
    for line in run["writer_failures"]:
        print(f"  writer: {line}")
    for turn in run["turns"]:
        print(f"  {turn['first_token']:5.1f} s / {turn['seconds']:5.1f} s  {turn['said'][:44]!r}"
              f" -> {turn['reply'][:80]!r}")  # fmt: skip


if __name__ == "__main__":
    main()
