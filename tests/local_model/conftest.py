"""The real local model behind the real llama.cpp server (make local-model), started once for the
session; collected only by `make test-local-model` (GULFSTREAM_LOCAL_MODEL_TESTS=1), never by
`make test`."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_SECONDS = 180.0  # loading 1.1 GB on a busy machine
ENABLED = os.environ.get("GULFSTREAM_LOCAL_MODEL_TESTS") == "1"

# Not collected unless asked for: these tests need `make local-model` and minutes of CPU.
collect_ignore_glob = [] if ENABLED else ["test_*.py"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(base: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def local_server() -> Iterator[str]:
    """The OpenAI-compatible base URL of `make local-serve` on a free port, at temperature 0;
    stopped with SIGTERM at the end, which must end it within seconds."""
    if not (ROOT / ".local-model" / "llama-server").exists():
        pytest.fail("the local model is not installed: run make local-model")
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "LOCAL_MODEL_TEMP": "0"}
    log = open(ROOT / ".local-model" / "test-server.log", "w")  # noqa: SIM115 (kept open)
    server = subprocess.Popen(
        ["bash", "scripts/local_model.sh", "serve"], cwd=ROOT, env=env, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_SECONDS
    while not _healthy(base):
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail(f"llama-server did not start; see {log.name}")
        time.sleep(1)
    yield f"{base}/v1"
    server.send_signal(signal.SIGTERM)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        pytest.fail("make local-serve did not stop on SIGTERM within 20 s")
    finally:
        log.close()
    assert not _healthy(base), "the server still answers after SIGTERM"
