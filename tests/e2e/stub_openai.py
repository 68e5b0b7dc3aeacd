"""A scripted OpenAI-compatible chat-completions server (stdlib only) for end-to-end tests."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

STUB_MODEL = "stub-model"
NO_MEMORIES_REPLY = "STUB: I have no memories of you."
SEARCH_PREFIX = "search the archive for "
PARSE_FAILURE = "the model produced output that does not match the expected peg-native format"
_USER_BLOCK = re.compile(r"^(?:user|用户)\s*[:：]\s*\n(`{3,})[a-z]*\n(.*?)\n\1", re.M | re.S)
_MEMORIES = re.compile(r"<memories>\s*(.*?)\s*</memories>", re.S)
# The writer prompt's scope rule, by keyword: what the user says about this conversation's task
# is a branch memory, anything else a user memory.
_TASK_MARKER = re.compile(
    r"\blet's\b|\bwe are working on\b|\bthis task\b|这次|这个任务|我们在做", re.I
)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def scripted_reply(request: dict[str, Any]) -> dict[str, Any]:
    """The assistant message for a request: a memory writer gets one create_memory call for
    each user message of the turns it writes, then finishes; the LLM retriever gets [0]; a chat
    request gets its memories quoted back."""
    messages = request.get("messages", [])
    tools = {t["function"]["name"]: t["function"] for t in request.get("tools") or []}
    if "create_memory" in tools:
        if any(m.get("role") == "tool" for m in messages):
            return {"role": "assistant", "content": "Memory updated."}
        prompt = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
        scoped = "scope" in tools["create_memory"].get("parameters", {}).get("properties", {})
        calls = []
        for match in _USER_BLOCK.finditer(prompt):
            said = match.group(2).strip()
            arguments = {"content": f"The user said: {said}", "section": "identity"}
            if scoped:
                arguments["scope"] = "branch" if _TASK_MARKER.search(said) else "user"
            calls.append(
                {
                    "id": f"call_{uuid.uuid4().hex[:10]}",
                    "type": "function",
                    "function": {"name": "create_memory", "arguments": json.dumps(arguments)},
                }
            )
        return {"role": "assistant", "content": None, "tool_calls": calls}
    said = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "user")
    searched = _archive_search(messages, tools)
    if searched is not None:
        return searched
    if "</query>" in said:  # the LLM retriever: pick the first memory of the numbered list
        return {"role": "assistant", "content": "[0]"}
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    fence = _MEMORIES.search(system)
    content = f"STUB: I remember: {fence.group(1)}" if fence else NO_MEMORIES_REPLY
    return {"role": "assistant", "content": content}


def _archive_search(messages: list[dict[str, Any]], tools: dict[str, Any]) -> dict[str, Any] | None:
    """ "search the archive for X": a search_conversations call, then the tool's answer quoted."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    asked = _text(messages[last_user].get("content")) if last_user >= 0 else ""
    if "search_conversations" not in tools or not asked.startswith(SEARCH_PREFIX):
        return None
    answers = [_text(m.get("content")) for m in messages[last_user:] if m.get("role") == "tool"]
    if answers:
        return {"role": "assistant", "content": f"STUB: the archive says: {answers[-1]}"}
    query = json.dumps({"query": asked.removeprefix(SEARCH_PREFIX).strip()})
    call = {"id": f"call_{uuid.uuid4().hex[:10]}", "type": "function",
            "function": {"name": "search_conversations", "arguments": query}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


class StubOpenAI:
    """`with StubOpenAI() as stub:` serves on `stub.base_url` and records every request. Each
    answer takes `delay_seconds` (a hosted model's latency, for the benchmarks), a memory
    writer's `writer_delay_seconds` when given (a slow writer: turns keep waiting meanwhile). The
    first `failing_chat_requests` chat requests (not the writer's) are answered HTTP 500 with
    llama.cpp's message for output it cannot parse, as a misbehaving local server does. A
    streamed answer pauses `chunk_delay_seconds` before each piece (a small local model writes a
    few words a second)."""

    def __init__(
        self,
        delay_seconds: float = 0.0,
        writer_delay_seconds: float | None = None,
        failing_chat_requests: int = 0,
        script: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        chunk_delay_seconds: float = 0.0,
    ):
        self.requests: list[dict[str, Any]] = []
        self.delay_seconds = delay_seconds
        self.chunk_delay_seconds = chunk_delay_seconds
        self.writer_delay_seconds = writer_delay_seconds
        self.failing_chat_requests = failing_chat_requests
        self.script = script or scripted_reply  # another lane's writer may do more than create
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._json({"object": "list", "data": [{"id": STUB_MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append(request)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                message = stub.script(request)
                tools = {t["function"]["name"] for t in request.get("tools") or []}
                if stub.failing_chat_requests > 0 and "create_memory" not in tools:
                    stub.failing_chat_requests -= 1
                    self._json({"error": {"code": 500, "message": PARSE_FAILURE}}, status=500)
                    return
                delay = stub.delay_seconds
                if stub.writer_delay_seconds is not None and "create_memory" in tools:
                    delay = stub.writer_delay_seconds
                if delay:
                    time.sleep(delay)
                usage = _usage(request, message)
                if request.get("stream"):
                    include = (request.get("stream_options") or {}).get("include_usage")
                    self._stream(message, usage if include else None)
                else:
                    self._json(_completion(message, usage))

            def _json(self, payload: dict[str, Any], status: int = 200) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _stream(self, message: dict[str, Any], usage: dict[str, int] | None) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.end_headers()
                for delta in _deltas(message):
                    time.sleep(stub.chunk_delay_seconds)
                    chunk = _chunk(delta, None)
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                self.wfile.write(f"data: {json.dumps(_chunk({}, finish))}\n\n".encode())
                if usage is not None:  # as OpenAI sends it: a last chunk without choices
                    last = {**_chunk({}, None), "choices": [], "usage": usage}
                    self.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> StubOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _usage(request: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    """Tokens as a provider would count them, roughly: four characters each."""
    asked = sum(len(_text(m.get("content"))) for m in request.get("messages", []))
    asked += len(json.dumps(request.get("tools") or []))
    answered = len(message.get("content") or "") + len(json.dumps(message.get("tool_calls") or []))
    prompt, completion = max(1, asked // 4), max(1, answered // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}  # fmt: skip


def _completion(message: dict[str, Any], usage: dict[str, int]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": STUB_MODEL,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": usage,
    }


def _deltas(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The message cut into streaming deltas: a few words at a time, tool calls whole."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    words = re.findall(r"\S+\s*", message.get("content") or "")
    deltas.extend({"content": "".join(words[i : i + 3])} for i in range(0, len(words), 3))
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append({"tool_calls": [{"index": index, **call}]})
    return deltas


def _chunk(delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": STUB_MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }
