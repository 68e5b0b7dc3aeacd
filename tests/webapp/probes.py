"""Measuring a running editor from outside: its memory (from /proc), a chunked body sent by hand,
and the texts the editor must refuse."""

from __future__ import annotations

import json
import select
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

MB = 1024 * 1024
JSON_WRITE = {"Content-Type": "application/json", "X-Gulfstream-CSRF": "1"}


def process_tree(pid: int) -> list[int]:
    """`pid` and every process below it (langgraph dev runs the server in a child)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                queue += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        return 0
    return 0


def rss_bytes(pid: int) -> int:
    """Resident memory of `pid` and its children, now."""
    return sum(_status_kb(p, "VmRSS") for p in process_tree(pid)) * 1024


def peak_rss_bytes(pid: int) -> int:
    """The largest resident set any process of the tree has had so far (VmHWM): the server's
    peak, wherever in the tree it runs."""
    return max(_status_kb(p, "VmHWM") for p in process_tree(pid)) * 1024


@dataclass
class ChunkedAnswer:
    status: int | None  # None: the server closed the connection before any answer arrived
    body: bytes
    sent: int  # body bytes the server let us send before it answered or closed
    seconds: float


def post_chunked(
    url: str, headers: dict[str, str], total: int, chunk: int = MB, patience: float = 30
) -> ChunkedAnswer:
    """POST `total` bytes with `Transfer-Encoding: chunked` (no Content-Length), stopping as
    soon as the server answers, stops reading, or closes: what a client streaming 1 GB does."""
    parts = urlsplit(url)
    started = time.monotonic()
    sock = socket.create_connection((parts.hostname, parts.port), timeout=5)
    head = [f"POST {parts.path or '/'}{'?' + parts.query if parts.query else ''} HTTP/1.1"]
    head += [f"Host: {parts.netloc}", "Transfer-Encoding: chunked"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    sent = 0
    filler = b"[" + b" " * (chunk - 1)  # the start of a JSON array that never ends
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        while sent < total and time.monotonic() - started < patience:
            if select.select([sock], [], [], 0)[0]:
                break  # an answer (or a close) is waiting
            piece = filler if sent == 0 else b" " * chunk
            sock.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            sent += len(piece)
    except (TimeoutError, OSError):
        pass  # the server stopped reading or closed: read what it said
    try:
        sock.settimeout(5)
        status, body = _read_answer(sock, OSError)
    finally:
        sock.close()
    return ChunkedAnswer(status, body, sent, time.monotonic() - started)


def post_declared(url: str, headers: dict[str, str], length: int) -> ChunkedAnswer:
    """Send only the head of a POST that declares `length` body bytes, and read the answer: a
    server that checks Content-Length first answers without waiting for the body."""
    parts = urlsplit(url)
    started = time.monotonic()
    head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {length}"]
    head += [f"{name}: {value}" for name, value in headers.items()]
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        status, body = _read_answer(sock, TimeoutError)
    return ChunkedAnswer(status, body, 0, time.monotonic() - started)


def _read_answer(sock: socket.socket, stops: type[OSError]) -> tuple[int | None, bytes]:
    """The HTTP answer's status and body, read until its Content-Length (or the close); an
    error of the `stops` kind ends the reading with what arrived."""
    answer = b""
    try:
        while b"\r\n\r\n" not in answer or len(answer) < _expected_length(answer):
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    except stops:
        pass
    status = int(answer.split()[1]) if answer.startswith(b"HTTP/1.1 ") else None
    body = answer.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in answer else b""
    return status, body


def _expected_length(answer: bytes) -> int:
    head, _, _ = answer.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(head) + 4 + int(value)
    return len(answer)


def raw_json(value: object) -> bytes:
    """JSON with every non-ASCII character escaped, so that lone surrogates can be sent."""
    return json.dumps(value, ensure_ascii=True).encode()


# What the editor must refuse, field by field, on every backend (400 naming the field).
BAD_DESCRIPTIONS = {
    "lone surrogate": "Lives in \ud800 Porto",
    "NUL": "Lives in\x00Porto",
    "escape sequence": "Lives in \x1b[31mPorto",
    "tab": "Lives in\tPorto",
    "bidi override": "invoice \u202efdp.exe",
    "bidi isolate": "Lives in \u2066Porto",
    "line separator": "Lives in\u2028Porto",
    "only zero-width": "\u200b\u200c\u200d",
    "only blank fillers": "\u3164\u2800",
}
BAD_THEMES = {
    "zero-width space": "food\u200b",
    "zero-width joiner": "fo\u200dod",
    "word joiner": "food\u2060",
    "bidi mark": "food\u200f",
    "bidi override": "\u202efood",
    "soft hyphen": "fo\u00adod",
    "BOM": "\ufefffood",
    "variation selector on a letter": "food\ufe0f",
    "NUL": "fo\x00od",
    "lone surrogate": "\udc00food",
    "newline": "two\nlines",
    "only invisible": "\u200b\u2060",
}
BAD_REASONS = {
    "NUL": "typo\x00",
    "lone surrogate": "typo \ud83d",
    "bidi override": "typo \u202e",
}
