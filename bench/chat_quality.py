"""Does the chat converse, and does the server's prompt cache hold? The real local model's
replies under the chat's own prompt, in each layout.

Run: `make local-model`, then `.venv/bin/python bench/chat_quality.py` (about 10 minutes on 2
cores; `--dialogues 6` for a quicker run).

The user's turns of public dialogues (tests/data/import_dialogues.jsonl: Synthetic-Persona-Chat,
CC BY 4.0), three a dialogue, then "Please forget what I said about <the first turn's topic>",
are sent one by one with the conversation so far to the 1.5B model (`make local-serve`,
temperature 0). Each request is the graph's own (graph/prompting.py: `build_chat_prompt` and
`request_messages`), as a turn sends it: a minute passes between turns, and the memories are the
user's earlier turns of the dialogue (what the writer would have filed). Both layouts in the same
run: `before` (the turn's context ahead of the instructions: the order before #32, the baseline),
`single` (instructions first, all in the first system message) and `split` (this turn's context
just before the user's latest message; GULFSTREAM_PROMPT_LAYOUT). The chat tools are bound, as
on a first round. Per split (dev | held-out: a
dialogue is held out when the first eight hex digits of the sha1 of its JSON line are divisible
by 3): the share of replies that restate the user ("You said …", "You mentioned …", or most of
their words echoed back), the share of forget requests acknowledged (the reply says it will
forget), the prompt tokens the server had to read (llama-server's `timings.prompt_n`: what its
cache did not hold), and the first token's and the whole reply's seconds (p50), streamed as
`make chat` shows them.
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

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from writer_quality import Server

import graph.prompting as prompting
from graph.context import Context
from graph.tools import chat_tools, tool_names

# The tools the agent binds on a first round: their schemas are part of every request's prefix.
TOOLS = chat_tools()
TOOL_NAMES = tool_names(TOOLS)
TOOL_SCHEMAS = [convert_to_openai_tool(tool) for tool in TOOLS]

ROOT = Path(__file__).resolve().parents[1]
DIALOGUES = ROOT / "tests" / "data" / "import_dialogues.jsonl"
TURNS_PER_DIALOGUE = 3
# "before": the turn's context ahead of the instructions, one system message (the order before
# #32), the baseline the two layouts of graph/prompting.py are measured against.
LAYOUTS = ("before", "single", "split")
ROLES = {"system": "system", "human": "user", "ai": "assistant"}
RESTATING = re.compile(
    r"^\s*(you (said|mentioned|expressed|informed|told|introduced|stated|shared|asked)|"
    r"you('ve| have) (said|mentioned|told|shared|expressed))\b",
    re.IGNORECASE,
)
TOOL_CALL = "[tool call] "
FORGET_ACK = re.compile(r"forget|forgot|won't remember|will not remember|removed|忘", re.I)
_WORD = re.compile(r"[a-z']{3,}")


@dataclass
class Tally:
    replies: int = 0
    restated: int = 0
    tool_calls: int = 0
    forgets: int = 0
    acknowledged: int = 0
    first_token: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    read: list[float] = field(default_factory=list)

    def row(self) -> str:
        restated = self.restated / self.replies if self.replies else 0.0
        acked = f"{self.acknowledged}/{self.forgets}"
        return (f"restated {restated:.2f} ({self.restated}/{self.replies})  forget acknowledged "
                f"{acked}  tool calls {self.tool_calls}  tokens read p50 "
                f"{median(self.read):.0f}  first token p50 {median(self.first_token):.1f} s  "
                f"reply p50 "
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


def user_turns(dialogue: list[dict[str, str]], turns: int) -> list[str]:
    said = [m["text"] for m in dialogue if m["role"] == "user"][:turns]
    topic = " ".join(_WORD.findall(said[0].lower())[-3:]) if said else "that"
    return [*said, f"Please forget what I said about {topic}."]


def request(history: list[BaseMessage], said: list[str], minute: int, layout: str) -> list[Any]:
    """The turn's request as the agent node builds it, in the OpenAI wire format."""
    clock = f"Thursday 2026-12-03 10:{minute:02d} (UTC+0000)"
    prompting.current_time_text = lambda *_: clock
    memories = [{"description": text, "theme": "user"} for text in said]
    prompt = prompting.build_chat_prompt(Context(), memories, {}, "en", tools=TOOL_NAMES)
    if layout == "before":
        whole = f"{prompt.context}\n\n{prompt.instructions}"
        sent: list[BaseMessage] = [SystemMessage(whole), *history]
    else:
        sent = prompting.request_messages(prompt, history, layout == "split")
    return [{"role": ROLES[m.type], "content": str(m.content)} for m in sent]


def streamed(client: Any, messages: list[dict[str, str]]) -> tuple[str, float, float, int]:
    """The reply, seconds to its first token and to its end, and the prompt tokens the server
    read (not served from its cache)."""
    started, first, read = time.monotonic(), 0.0, 0
    parts: list[str] = []
    stream = client.chat.completions.create(
        model="local", messages=messages, temperature=0, max_tokens=160, stream=True,
        tools=TOOL_SCHEMAS,
    )  # fmt: skip
    for chunk in stream:
        delta = chunk.choices[0].delta if chunk.choices else None
        if delta and delta.content:
            first = first or time.monotonic() - started
            parts.append(delta.content)
        elif delta and delta.tool_calls:  # a tool call: the reply is another round away
            first = first or time.monotonic() - started
            for call in delta.tool_calls:
                if call.function and call.function.name:
                    parts.append(f"{TOOL_CALL}{call.function.name}")
        timings = (chunk.model_extra or {}).get("timings") or {}
        read = int(timings.get("prompt_n", read))
    return "".join(parts).strip(), first, time.monotonic() - started, read


def run(client: Any, dialogues: list[list[dict[str, str]]], layout: str, turns: int,
        show: Callable[[str], None]) -> dict[str, Tally]:  # fmt: skip
    tallies = {"dev": Tally(), "held-out": Tally()}
    for dialogue in dialogues:
        tally = tallies["held-out" if held_out(dialogue) else "dev"]
        history: list[BaseMessage] = []
        said_turns = user_turns(dialogue, turns)
        for number, said in enumerate(said_turns, 1):
            history.append(HumanMessage(said))
            earlier = [text for text in said_turns[: number - 1] if not text.startswith("Please")]
            sent = request(history, earlier, number, layout)
            reply, first, whole, read = streamed(client, sent)
            history.append(AIMessage(reply))
            tally.first_token.append(first)
            tally.whole.append(whole)
            tally.read.append(read)
            tally.tool_calls += reply.startswith(TOOL_CALL)
            if number == len(said_turns):
                tally.forgets += 1
                tally.acknowledged += bool(FORGET_ACK.search(reply))
            else:
                tally.replies += 1
                tally.restated += restates(reply, said)
            show(f"  {said[:60]!r} -> {reply[:90]!r} ({read} tokens read)")
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=12)
    parser.add_argument("--turns", type=int, default=TURNS_PER_DIALOGUE,
                        help="user turns a dialogue, before the forget request")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every reply")
    args = parser.parse_args()
    from openai import OpenAI

    lines = DIALOGUES.read_text(encoding="utf-8").splitlines()
    dialogues = [json.loads(line) for line in lines[: args.dialogues]]
    server = Server("1.5b")
    try:
        client = OpenAI(base_url=f"{server.base}/v1", api_key="local")
        show = print if args.verbose else (lambda _: None)
        for layout in LAYOUTS:
            print(f"== layout {layout}")
            for split, tally in run(client, dialogues, layout, args.turns, show).items():
                print(f"  {split:<9} {tally.row()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
