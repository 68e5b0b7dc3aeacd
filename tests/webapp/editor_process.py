"""Run the memory editor as a real `python -m webapp` process on a free port, for the tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def run_editor(data_dir: Path, **extra_env: str) -> Iterator[str]:
    """Start the editor over `yaml:<data_dir>` and yield its base URL (no trailing slash)."""
    port = free_port()
    env = {
        **os.environ,
        "GULFSTREAM_MEMORY_BACKEND": f"yaml:{data_dir}",
        "GULFSTREAM_EDITOR_PORT": str(port),
        "GULFSTREAM_EDITOR_POLL_SECONDS": "0.2",
        **extra_env,
    }
    env.pop("GULFSTREAM_EDITOR_REQUIRE_AUTH", None)
    log = data_dir.parent / f"editor-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "webapp"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/memories/api/whoami", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the editor did not start: {log.read_text()}")
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
