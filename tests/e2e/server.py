"""Start a real `langgraph dev` on a copy of the app in a temporary folder (for e2e tests)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.stub_openai import StubOpenAI

PROJECT = Path(__file__).resolve().parents[2]
# The web app, when the fork kept it (docs/CUSTOMIZING.md: the editor).
APP_PARTS = [
    part
    for part in ("graph", "memory", "prompts", "webapp", "langgraph.json", "pyproject.toml")
    if (PROJECT / part).exists()
]
LANGGRAPH_BIN = Path(sys.executable).with_name("langgraph")
STARTUP_SECONDS = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def copy_app(target: Path) -> Path:
    """The app's packages and langgraph.json, without data/, .env or .langgraph_api/."""
    target.mkdir(parents=True, exist_ok=True)
    for part in APP_PARTS:
        source = PROJECT / part
        if source.is_dir():
            shutil.copytree(source, target / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target / part)
    return target


class DevServer:
    """`langgraph dev --no-browser --no-reload` in `app_dir`; output goes to `log_path`."""

    def __init__(self, app_dir: Path, env: dict[str, str]) -> None:
        self.app_dir = app_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = app_dir / "server.log"
        full_env = {**os.environ, **env}
        full_env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true")
        # The copy, not the editable install of the project, must provide the packages.
        full_env["PYTHONPATH"] = str(app_dir)
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                str(LANGGRAPH_BIN),
                "dev",
                "--no-browser",
                "--no-reload",
                "--port",
                str(self.port),
                "--n-jobs-per-worker",
                "8",
            ],
            cwd=app_dir,
            env=full_env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_ready(self, timeout: float) -> bool:
        """True once /ok answers; False if the process exits or the time runs out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as response:
                    if response.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.3)
        return False

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # our own process group only
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self._log.close()


def stub_model_env(stub: StubOpenAI) -> dict[str, str]:
    """The environment that points the app's default model at the local stub server."""
    return {
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "stub",
        "GULFSTREAM_MODEL": "openai/stub-model",
    }


@contextmanager
def running_server(app: Path, env: dict[str, str]) -> Iterator[DevServer]:
    """`langgraph dev` on `app` with `env`, ready (the test fails with the server's log when it
    is not within STARTUP_SECONDS), stopped afterwards."""
    dev = DevServer(app, env)
    try:
        if not dev.wait_ready(STARTUP_SECONDS):
            pytest.fail(f"langgraph dev did not become ready:\n{dev.log()[-5000:]}")
        yield dev
    finally:
        dev.stop()
