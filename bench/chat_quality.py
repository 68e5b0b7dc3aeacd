"""Does the chat converse? The real local model's replies under the chat's system prompt.

Run: `make local-model`, then `.venv/bin/python bench/chat_quality.py` (about 10 minutes on 2
cores; `--dialogues 6` for a quicker run).

The user's turns of public dialogues (tests/data/import_dialogues.jsonl: Synthetic-Persona-Chat,
CC BY 4.0), three a dialogue, then "Please forget what I said about <the first turn's topic>",
are sent one by one with the conversation so far to the 1.5B model (`make local-serve`,
temperature 0) under two closing lines of the system prompt in the same run: the baseline (the
line before issue 32, "Answer the user in your own words.") and the current one
(prompts/persona.py). Per split (dev | held-out: a dialogue is held out when the first eight hex
digits of the sha1 of its JSON line are divisible by 3): the share of replies that restate the
user ("You said …", "You mentioned …", or most of their words echoed back), the share of forget
requests acknowledged (the reply says it will forget), the first token's and the whole reply's
seconds (p50), streamed as `make chat` shows them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from writer_quality import Server

from prompts.agent import NO_MEMORIES
from prompts.persona import PERSONA, SYSTEM_PROMPTS

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = ROOT / "tests" / "data" / "import_dialogues.jsonl"
TURNS_PER_DIALOGUE = 3
BASELINE_CLOSING = "Answer the user in your own words."
RESTATING = re.compile(
    r"^\s*(you (said|mentioned|expressed|informed|told|introduced|stated|shared|asked)|"
    r"you('ve| have) (said|mentioned|told|shared|expressed))\b",
    re.IGNORECASE,
)
FORGET_ACK = re.compile(r"forget|forgot|won't remember|will not remember|removed|忘", re.I)
_WORD = re.compile(r"[a-z']{3,}")


@dataclass
class Tally:
    replies: int = 0
    restated: int = 0
    forgets: int = 0
    acknowledged: int = 0
    first_token: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)

    def row(self) -> str:
        restated = self.restated / self.replies if self.replies else 0.0
        acked = f"{self.acknowledged}/{self.forgets}"
        return (f"restated {restated:.2f} ({self.restated}/{self.replies})  forget acknowledged "
                f"{acked}  first token p50 {median(self.first_token):.1f} s  reply p50 "
                f"{median(self.whole):.1f} s")  # fmt: skip


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def restates(reply: str, said: str) -> bool:
    """A reply that tells the user what they said instead of answering it."""
    if RESTATING.search(reply):
        return True
    theirs, ours = set(_WORD.findall(said.lower())), _WORD.findall(reply.lower())
    echoed = sum(1 for word in ours if word in theirs)
    return len(ours) >= 4 and echoed / len(ours) >= 0.6


def held_out(dialogue: list[dict[str, str]]) -> bool:
    digest = hashlib.sha1(json.dumps(dialogue, ensure_ascii=False).encode()).hexdigest()
    return int(digest[:8], 16) % 3 == 0


def user_turns(dialogue: list[dict[str, str]]) -> list[str]:
    said = [m["text"] for m in dialogue if m["role"] == "user"][:TURNS_PER_DIALOGUE]
    topic = " ".join(_WORD.findall(said[0].lower())[-3:]) if said else "that"
    return [*said, f"Please forget what I said about {topic}."]


def system_prompt(closing: str) -> str:
    template = SYSTEM_PROMPTS["en"]
    current = template.rsplit("\n\n", 1)[-1]
    return template.replace(current, closing).format(
        persona=PERSONA["en"], current_time="Thursday 2026-12-03 10:00 (UTC+0000)",
        core_context="", memories=NO_MEMORIES["en"], tools="",
    )  # fmt: skip


def streamed(client: Any, messages: list[dict[str, str]]) -> tuple[str, float, float]:
    """The reply, seconds to its first token and to its end."""
    started, first = time.monotonic(), 0.0
    parts: list[str] = []
    stream = client.chat.completions.create(
        model="local", messages=messages, temperature=0, max_tokens=160, stream=True
    )
    for chunk in stream:
        delta = chunk.choices[0].delta.content if chunk.choices else None
        if delta:
            first = first or time.monotonic() - started
            parts.append(delta)
    return "".join(parts).strip(), first, time.monotonic() - started


def run(client: Any, dialogues: list[list[dict[str, str]]], closing: str,
        show: Callable[[str], None]) -> dict[str, Tally]:  # fmt: skip
    tallies = {"dev": Tally(), "held-out": Tally()}
    for dialogue in dialogues:
        tally = tallies["held-out" if held_out(dialogue) else "dev"]
        messages = [{"role": "system", "content": system_prompt(closing)}]
        turns = user_turns(dialogue)
        for number, said in enumerate(turns, 1):
            messages.append({"role": "user", "content": said})
            reply, first, whole = streamed(client, messages)
            messages.append({"role": "assistant", "content": reply})
            tally.first_token.append(first)
            tally.whole.append(whole)
            if number == len(turns):
                tally.forgets += 1
                tally.acknowledged += bool(FORGET_ACK.search(reply))
            else:
                tally.replies += 1
                tally.restated += restates(reply, said)
            show(f"  {said[:60]!r} -> {reply[:90]!r}")
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=12)
    parser.add_argument("--verbose", action="store_true", help="print every reply")
    args = parser.parse_args()
    from openai import OpenAI

    lines = DIALOGUES.read_text(encoding="utf-8").splitlines()
    dialogues = [json.loads(line) for line in lines[: args.dialogues]]
    server = Server("1.5b")
    try:
        client = OpenAI(base_url=f"{server.base}/v1", api_key="local")
        current = SYSTEM_PROMPTS["en"].rsplit("\n\n", 1)[-1]
        show = print if args.verbose else (lambda _: None)
        for label, closing in (("baseline", BASELINE_CLOSING), ("current", current)):
            print(f"== {label}: {closing!r}")
            for split, tally in run(client, dialogues, closing, show).items():
                print(f"  {split:<9} {tally.row()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
