"""Run the memory editor as a real `python -m webapp` process on a free port, for the tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(
    command: list[str], cwd: Path, env: dict[str, str], ready_url: str, seconds: float, log: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """Start `command` (output to `log`), wait until `ready_url` answers 200, stop it on exit.
    If it dies or is not up within `seconds`, raise with its log."""
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                if httpx.get(ready_url, timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{command!r} did not start:\n{log.read_text()}")
            time.sleep(0.1)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def read_events(lines: Iterator[str], wanted: str, seconds: float = 30) -> Iterator[dict[str, Any]]:
    """The data of each `wanted` server-sent event; fails after `seconds` (heartbeats keep an
    idle stream from timing out, so the read alone would wait forever)."""
    deadline = time.monotonic() + seconds
    event = ""
    for line in lines:
        if line.startswith("event:"):
            event = line.split(":", 1)[1].strip()
        elif line.startswith("data:") and event == wanted:
            yield json.loads(line.split(":", 1)[1])
        if time.monotonic() > deadline:
            raise AssertionError(f"no {wanted!r} event within {seconds} s")


@contextmanager
def run_editor(data_dir: Path, **extra_env: str) -> Iterator[str]:
    """Start the editor over `yaml:<data_dir>` and yield its base URL (no trailing slash)."""
    with run_editor_process(data_dir, **extra_env) as (base, _):
        yield base


@contextmanager
def run_editor_process(
    data_dir: Path, **extra_env: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`run_editor`, yielding the process too (to measure it)."""
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
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "webapp"]
    with running(command, ROOT, env, f"{base}/memories/", 30, log) as process:
        yield base, process


# The module-scoped fixtures every editor test module shares: one store folder and one editor
# process per module (tests/webapp/conftest.py and tests/browser/conftest.py import them).
@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    directory = tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1]) / "memory"
    directory.mkdir()
    return directory


@pytest.fixture(scope="module")
def base_url(data_dir: Path) -> Iterator[str]:
    with run_editor(data_dir) as base:
        yield base
