"""`make chat` prints a reply while the model is still writing it, once, and never shows a tool
call the model wrote as text: a real chat process against a chat-completions server that streams
a few words at a time."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.e2e.stub_openai import STUB_MODEL, StubOpenAI, scripted_reply

PROJECT = Path(__file__).resolve().parents[2]
CHUNK_SECONDS = 0.4
REPLY = "Nice to meet you, Ana! Lisbon is a lovely city to live in. What do you do there?"
TURN = "Hi, I'm Ana and I live in Lisbon."
CALL_AS_TEXT = '{"name": "get_current_time", "arguments": {}}'


class Terminal:
    """What the chat process writes, each piece with the time it arrived."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.pieces: list[tuple[float, str]] = []
        assert process.stdout is not None
        stdout = process.stdout
        self._reader = threading.Thread(target=self._read, args=(stdout,), daemon=True)
        self._reader.start()

    def _read(self, stdout: Any) -> None:
        while piece := os.read(stdout.fileno(), 64):
            self.pieces.append((time.monotonic(), piece.decode(errors="replace")))

    @property
    def text(self) -> str:
        return "".join(piece for _, piece in self.pieces)

    def when(self, fragment: str, timeout: float = 90.0) -> float:
        """When `fragment` was first on screen."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = ""
            for at, piece in list(self.pieces):
                seen += piece
                if fragment in seen:
                    return at
            time.sleep(0.05)
        raise AssertionError(f"{fragment!r} never appeared; the screen:\n{self.text}")


def chat_replying(script: Any, turn: str, tmp_path: Path) -> Terminal:
    """What `make chat` (YAML memory, the chat model at the streaming stub) showed for `turn`."""
    with StubOpenAI(script=script, chunk_delay_seconds=CHUNK_SECONDS) as stub:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}
        env |= {
            "OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "not-needed",
            "GULFSTREAM_MODEL": f"openai/{STUB_MODEL}",
            "GULFSTREAM_MEMORY_BACKEND": f"yaml:{tmp_path / 'memory'}",
        }  # fmt: skip
        process = subprocess.Popen(
            [sys.executable, "-m", "graph.cli.chat", "--data", str(tmp_path / "chat")],
            cwd=PROJECT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        )  # fmt: skip
        terminal = Terminal(process)
        assert process.stdin is not None
        process.stdin.write(f"{turn}\n/quit\n".encode())  # read one at a time, as typed
        process.stdin.close()
        assert process.wait(timeout=120) == 0, terminal.text
    return terminal


def test_the_reply_appears_word_by_word_and_once(tmp_path: Path) -> None:
    def script(request: dict[str, Any]) -> dict[str, Any]:
        if request.get("tools") and any(
            t["function"]["name"] == "create_memory" for t in request["tools"]
        ):
            return scripted_reply(request)
        return {"role": "assistant", "content": REPLY}

    terminal = chat_replying(script, TURN, tmp_path)
    started = terminal.when("bot> Nice to meet you")
    ended = terminal.when("What do you do there?")
    # Seven pieces of three words arrive CHUNK_SECONDS apart: the first words were on screen
    # seconds before the last, not printed together at the end.
    assert ended - started >= 3 * CHUNK_SECONDS, terminal.text
    assert terminal.text.count(REPLY) == 1
    assert f"bot> {REPLY}\n" in terminal.text


def test_a_tool_call_written_as_text_is_never_shown(tmp_path: Path) -> None:
    def script(request: dict[str, Any]) -> dict[str, Any]:
        names = {t["function"]["name"] for t in request.get("tools") or []}
        if "create_memory" in names:
            return scripted_reply(request)
        asked_already = any(m.get("role") == "tool" for m in request["messages"])
        if "get_current_time" in names and not asked_already:
            return {"role": "assistant", "content": CALL_AS_TEXT}  # run as a call by the agent
        return {"role": "assistant", "content": REPLY}

    terminal = chat_replying(script, TURN, tmp_path)
    terminal.when("What do you do there?")
    assert "get_current_time" not in terminal.text and '{"name"' not in terminal.text
    assert terminal.text.count(REPLY) == 1, terminal.text
