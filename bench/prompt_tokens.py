"""Prompt tokens of the requests one chat turn sends: the chat model's and the memory writer's, for
the tools and the json writer protocols, on an empty store and on one holding 40 memories.

    .venv/bin/python bench/prompt_tokens.py [--tokenizer http://127.0.0.1:8080]

The requests are the real ones: one turn through `compile_graph()` (inline writes, YAML) against
the scripted OpenAI-compatible stub, which records them. Tokens are counted by a llama.cpp server's
`/tokenize` when `--tokenizer` names one (`make local-serve`: the local model's own tokenizer; the
chat template's few wrapper tokens are not included), else estimated at four characters a token.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TURN = "My name is Li Wei and I live in Hangzhou."
STORED = 40


def request_text(request: dict[str, Any]) -> tuple[str, str]:
    """The request's messages and its tool schemas, as text. A response_format's schema is left
    out: llama.cpp turns it into a grammar that constrains decoding, not into prompt tokens."""
    parts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(content or "")
    schemas = request.get("tools") or []
    return "\n".join(parts), json.dumps(schemas, ensure_ascii=False) if schemas else ""


def counter(tokenizer: str | None) -> Any:
    def count(text: str) -> int:
        if not text:
            return 0
        if tokenizer is None:
            return max(1, len(text) // 4)
        body = json.dumps({"content": text}).encode()
        asked = urllib.request.Request(f"{tokenizer.rstrip('/')}/tokenize", data=body,
                                       headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(asked, timeout=60) as answer:
            return len(json.loads(answer.read())["tokens"])

    return count


def one_turn(protocol: str, stored: int) -> list[dict[str, Any]]:
    """The requests of one turn, in order, with `stored` memories in the user's store."""
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.agent import compile_graph
    from graph.context import Context
    from memory.integration.settings import Settings, use_settings
    from memory.store.factory import open_memory_manager
    from tests.e2e.stub_openai import StubOpenAI

    with tempfile.TemporaryDirectory() as folder, StubOpenAI() as stub:
        os.environ["OPENAI_BASE_URL"] = stub.base_url
        backend = f"yaml:{folder}"
        manager = open_memory_manager(backend, "li")
        for number in range(stored):
            manager.add(f"The user mentioned detail number {number} about their week.", "moments")
        with use_settings(Settings(), memory_backend=backend, write_mode="inline",
                          writer_protocol=protocol, admission=False):  # fmt: skip
            app = compile_graph(checkpointer=InMemorySaver())
            app.invoke(
                {"messages": [{"role": "user", "content": TURN}]},
                {"configurable": {"thread_id": "t"}},
                context=Context(user_id="li", model="openai/local", writer_model="openai/local"),
            )
        return list(stub.requests)


def kind(request: dict[str, Any]) -> str:
    names = {t["function"]["name"] for t in request.get("tools") or []}
    if request.get("response_format"):
        return "writer (json)"
    return "writer (tools)" if "create_memory" in names else "chat"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tokenizer", help="a llama.cpp server's base URL, e.g. http://127.0.0.1:8080"
    )
    args = parser.parse_args()
    logging.disable(logging.ERROR)  # the stub's chat answer is no JSON: the json writer fails
    count = counter(args.tokenizer)
    how = f"tokenized by {args.tokenizer}" if args.tokenizer else "estimated, 4 characters a token"
    print(f"prompt tokens of one turn ({how}); 'schemas' = the tool schemas\n")
    header = ("protocol", "memories", "request", "messages", "schemas", "total")
    print("{:<8} {:>8}  {:<15} {:>8} {:>8} {:>7}".format(*header))
    seen: set[tuple[str, int, str]] = set()
    for protocol in ("tools", "json"):
        for stored in (0, STORED):
            for request in one_turn(protocol, stored):
                what = kind(request)
                if (protocol, stored, what) in seen:  # a repair round: same prompt, longer
                    continue
                seen.add((protocol, stored, what))
                messages, schemas = request_text(request)
                m, s = count(messages), count(schemas)
                print(f"{protocol:<8} {stored:>8}  {what:<15} {m:>8} {s:>8} {m + s:>7}")


if __name__ == "__main__":
    main()
