"""Does the chat converse, and does the server's prompt cache hold? The real local model's
replies under the chat's own prompt, in each layout.

Run: `make local-model`, then `.venv/bin/python bench/chat_quality.py` (about 10 minutes on 2
cores; `--dialogues 6` for a quicker run).

The user's turns of public dialogues (tests/data/import_dialogues.jsonl: Synthetic-Persona-Chat, CC
BY 4.0) that say something about them ("I'm a carpenter", "my dog"), three a dialogue, then "Please
forget what I said about <the first turn's topic>", are sent one by one with the conversation so far
to the 1.5B model (`--model 0.5b`: the smaller one; `make local-serve`, temperature 0). Each request
is the graph's own (graph/prompting.py: `build_chat_prompt` and `request_messages`), as a turn sends
it: a minute passes between turns, and the memories are the user's earlier turns of the dialogue
(what the writer would have filed). Both layouts in the same run: `before` (the turn's context ahead
of the instructions: the order before #32, the baseline), `single` (instructions first, all in the
first system message) and `split` (this turn's context just before the user's latest message;
GULFSTREAM_PROMPT_LAYOUT). The chat tools are bound as the agent binds them for `openai/local` on a
first round (none: GULFSTREAM_SMALL_MODEL_TOOL_ROUNDS; `--tools bound` for all five, a call written
as text counted as a call). Per split (dev | held-out: a dialogue is held out when the first eight
hex digits of the sha1 of its JSON line are divisible by 3): the share of replies that restate the
user ("You said …", "You mentioned …", or most of their words echoed back), that speak of forgetting
when nobody asked, or that repeat an earlier reply word for word; the share of forget requests
acknowledged (the reply says it will forget); then "What do you remember about me?" with the turns
before the forgotten one as memories: recalled when the reply holds one of their words; the prompt
tokens the server had to read (llama-server's `timings.prompt_n`: what its cache did not hold), and
the first token's and the whole reply's seconds (p50), streamed as `make chat` shows them.
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
from memory.integration.settings import get_settings
from memory.integration.tool_loop import allowed_tool_rounds
from memory.writer.text_calls import parse_text_tool_calls

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
ABOUT_THEMSELVES = re.compile(r"\b(I'm|I am|I have|I've|I love|I like|my)\b", re.I)
# Asked last, after the forget: the memories are the turns before it, the forgotten one left out.
RECALL_QUESTION = "What do you remember about me?"


@dataclass
class Tally:
    replies: int = 0
    restated: int = 0
    # A reply about forgetting to a turn that asked no such thing (the 1.5B model answered
    # "I will forget it." to every turn when the prompt's last line was about forgetting).
    spurious_forgets: int = 0
    repeated: int = 0  # a reply word for word the same as an earlier one of the dialogue
    tool_calls: int = 0
    forgets: int = 0
    acknowledged: int = 0
    questions: int = 0
    recalled: int = 0
    first_token: list[float] = field(default_factory=list)
    whole: list[float] = field(default_factory=list)
    read: list[float] = field(default_factory=list)

    def row(self) -> str:
        restated = self.restated / self.replies if self.replies else 0.0
        acked = f"{self.acknowledged}/{self.forgets}"
        return (f"restated {restated:.2f} ({self.restated}/{self.replies})  spurious forget "
                f"{self.spurious_forgets}/{self.replies}  repeated {self.repeated}/"
                f"{self.replies}  recalled {self.recalled}/{self.questions}  forget acknowledged "
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
    # What the user says about themselves ("I'm a carpenter"), as a user telling the assistant:
    # a dialogue's questions to its other speaker ("What do you do?") are not that.
    said = [
        m["text"] for m in dialogue if m["role"] == "user" and ABOUT_THEMSELVES.search(m["text"])
    ]
    said = said[:turns]
    topic = " ".join(_WORD.findall(said[0].lower())[-3:]) if said else "that"
    return [*said, f"Please forget what I said about {topic}.", RECALL_QUESTION]


def recalls(reply: str, memories: list[str]) -> bool:
    """A reply to RECALL_QUESTION that tells the user something the memories hold: one of
    their words of five letters or more that the question does not have."""
    theirs = {word for text in memories for word in _WORD.findall(text.lower()) if len(word) >= 5}
    return bool(theirs & set(_WORD.findall(reply.lower())))


def request(
    history: list[BaseMessage], said: list[str], minute: int, layout: str, tools: bool
) -> list[Any]:
    """The turn's request as the agent node builds it, in the OpenAI wire format."""
    clock = f"Thursday 2026-12-03 10:{minute:02d} (UTC+0000)"
    prompting.current_time_text = lambda *_: clock
    memories = [{"description": text, "theme": "user"} for text in said]
    names = TOOL_NAMES if tools else ()
    prompt = prompting.build_chat_prompt(Context(), memories, {}, "en", tools=names)
    if layout == "before":
        whole = f"{prompt.context}\n\n{prompt.instructions}"
        sent: list[BaseMessage] = [SystemMessage(whole), *history]
    else:
        sent = prompting.request_messages(prompt, history, layout == "split")
    return [{"role": ROLES[m.type], "content": str(m.content)} for m in sent]


def streamed(
    client: Any, messages: list[dict[str, str]], tools: bool
) -> tuple[str, float, float, int]:
    """The reply, seconds to its first token and to its end, and the prompt tokens the server
    read (not served from its cache)."""
    started, first, read = time.monotonic(), 0.0, 0
    parts: list[str] = []
    stream = client.chat.completions.create(
        model="local", messages=messages, temperature=0, max_tokens=160, stream=True,
        **({"tools": TOOL_SCHEMAS} if tools else {}),
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
    reply = "".join(parts).strip()
    if tools and parse_text_tool_calls(reply, list(TOOL_NAMES)):  # run as a call by the agent
        reply = f"{TOOL_CALL}{reply}"
    return reply, first, time.monotonic() - started, read


def run(client: Any, dialogues: list[list[dict[str, str]]], layout: str, turns: int,
        show: Callable[[str], None], tools: bool) -> dict[str, Tally]:  # fmt: skip
    tallies = {"dev": Tally(), "held-out": Tally()}
    for dialogue in dialogues:
        tally = tallies["held-out" if held_out(dialogue) else "dev"]
        history: list[BaseMessage] = []
        said_turns = user_turns(dialogue, turns)
        for number, said in enumerate(said_turns, 1):
            history.append(HumanMessage(said))
            earlier = [text for text in said_turns[: number - 1] if not text.startswith("Please")]
            if said == RECALL_QUESTION:
                earlier = earlier[1:]  # the first turn was forgotten
            sent = request(history, earlier, number, layout, tools)
            reply, first, whole, read = streamed(client, sent, tools)
            earlier_replies = [str(m.content) for m in history if isinstance(m, AIMessage)]
            history.append(AIMessage(reply))
            tally.first_token.append(first)
            tally.whole.append(whole)
            tally.read.append(read)
            tally.tool_calls += reply.startswith(TOOL_CALL)
            if said == RECALL_QUESTION:
                tally.questions += 1
                tally.recalled += recalls(reply, earlier)
            elif said.startswith("Please forget"):
                tally.forgets += 1
                tally.acknowledged += bool(FORGET_ACK.search(reply))
            else:
                tally.replies += 1
                tally.restated += restates(reply, said)
                tally.spurious_forgets += bool(FORGET_ACK.search(reply))
                tally.repeated += reply in earlier_replies
            show(f"  {said[:60]!r} -> {reply[:90]!r} ({read} tokens read)")
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialogues", type=int, default=12)
    parser.add_argument("--turns", type=int, default=TURNS_PER_DIALOGUE,
                        help="user turns a dialogue, before the forget request")  # fmt: skip
    parser.add_argument("--verbose", action="store_true", help="print every reply")
    parser.add_argument("--model", default="1.5b", help="the local model: 1.5b or 0.5b")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help="comma-separated")
    parser.add_argument("--tools", choices=("graph", "bound", "none"), default="graph",
                        help="graph: as the agent binds them for openai/local")  # fmt: skip
    args = parser.parse_args()
    tools = {"bound": True, "none": False}.get(
        args.tools, allowed_tool_rounds(get_settings(), "openai/local") > 0
    )
    from openai import OpenAI

    lines = DIALOGUES.read_text(encoding="utf-8").splitlines()
    dialogues = [json.loads(line) for line in lines[: args.dialogues]]
    server = Server(args.model)
    try:
        client = OpenAI(base_url=f"{server.base}/v1", api_key="local")
        show = print if args.verbose else (lambda _: None)
        for layout in args.layouts.split(","):
            print(f"== layout {layout}, tools {'bound' if tools else 'none'}")
            for split, tally in run(client, dialogues, layout, args.turns, show, tools).items():
                print(f"  {split:<9} {tally.row()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
