"""Processes sharing one journal: each turn runs once, in one process at a time (a lease); a
process that dies mid-turn leaves it to the other once its lease runs out. And Ctrl-C during
the exit drain ends it at once, the turn kept for the next start."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memory.writer.journal import TurnJournal
from memory.writer.turn import Turn
from tests.integration.test_writer_faults import SilentServer

ROOT = Path(__file__).resolve().parents[2]


def spawn(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen(
        [sys.executable, *args], cwd=ROOT, env=full, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def test_two_processes_on_one_journal_run_each_turn_once(tmp_path: Path) -> None:
    journal = TurnJournal(tmp_path / "write-journal.sqlite")
    ids = []
    for number in range(40):
        turn = Turn.of("ada", [{"role": "user", "content": f"fact {number}"}], turn_id=f"t{number}")
        journal.append(turn)
        ids.append(turn.turn_id)
    journal.close()
    workers = [
        spawn(["-m", "tests.integration.shared_journal_worker", str(tmp_path)]) for _ in range(2)
    ]
    for worker in workers:
        output, _ = worker.communicate(timeout=180)
        assert worker.returncode == 0, output
    runs = [
        line.split()
        for log in tmp_path.glob("consumed-*.log")
        for line in log.read_text().splitlines()
    ]
    consumed = sorted((turn_id for _, turn_id, _, _ in runs), key=lambda t: int(t[1:]))
    assert consumed == ids  # every turn once: 40 runs, not one per process and turn
    reopened = TurnJournal(tmp_path / "write-journal.sqlite")
    assert reopened.counts("ada") == {"pending": 0, "done": 40, "dead": 0}


def test_a_dead_process_s_turn_is_taken_over_when_its_lease_runs_out(tmp_path: Path) -> None:
    path = tmp_path / "write-journal.sqlite"
    dead = TurnJournal(path, owner="a-process-that-died")
    turn = Turn.of("ada", [{"role": "user", "content": "fact"}], turn_id="t0")
    dead.append(turn)
    assert dead.claim("ada", "t0", seconds=1.5)  # then it is killed: the lease stays
    dead.close()
    started = time.monotonic()
    worker = spawn(["-m", "tests.integration.shared_journal_worker", str(tmp_path)])
    output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output
    assert time.monotonic() - started >= 1.0  # it waited for the lease, then took the turn
    assert TurnJournal(path).counts("ada")["done"] == 1


EXITING_SCRIPT = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    from graph.agent import compile_graph
    from graph.context import Context
    state = compile_graph().invoke(
        {"messages": [{"role": "user", "content": "I live in Lisbon."}]},
        context=Context(user_id="ada", model="offline/rules", writer_model="openai/stalled"),
    )
    print("journaled:", state["memory_write"]["status"], flush=True)
    """
)


def test_ctrl_c_during_the_exit_drain_ends_it_at_once(tmp_path: Path) -> None:
    silent = SilentServer()
    try:
        process = spawn(
            ["-c", EXITING_SCRIPT],
            {
                "GULFSTREAM_MEMORY_BACKEND": f"yaml:{tmp_path / 'memory'}",
                "GULFSTREAM_WRITER_TIMEOUT_SECONDS": "60",
                "OPENAI_BASE_URL": silent.base_url,
                "GULFSTREAM_SNAPSHOT_SECONDS": "off",
            },
        )
        assert process.stdout is not None
        lines: list[str] = []
        deadline = time.monotonic() + 60
        while not lines or "journaled:" not in lines[-1]:
            ready, _, _ = select.select([process.stdout], [], [], 1.0)
            assert time.monotonic() < deadline, "".join(lines)
            if ready:
                line = process.stdout.readline()
                assert line, "".join(lines)
                lines.append(line)
        assert "journaled: journaled" in lines[-1]
        deadline = time.monotonic() + 30
        while not silent.connections:  # the writer is waiting on the stalled model
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # the script has returned; the interpreter is in its exit drain
        interrupted = time.monotonic()
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=20)
        assert time.monotonic() - interrupted < 5, "Ctrl-C did not end the exit drain"
        assert "stay in the journal" in rest, rest
        journal = TurnJournal(tmp_path / "memory" / "write-journal.sqlite")
        assert journal.counts("ada")["pending"] == 1  # kept for the next start
    finally:
        silent.close()


CLAIM_AND_WAIT = textwrap.dedent(
    """
    import sys, time
    from memory.writer.turn import Turn
    from memory.writer.journal import TurnJournal
    journal = TurnJournal(sys.argv[1])
    journal.append(Turn.of("ada", [{"role": "user", "content": "fact"}], turn_id="t0"))
    assert journal.claim("ada", "t0", seconds=300)
    print("claimed", flush=True)
    time.sleep(600)
    """
)


def test_a_crashed_process_s_lease_is_taken_over_at_once(tmp_path: Path) -> None:
    """A process killed while it held a turn's lease does not hold up the turn for the lease's
    whole length: the next process on this machine sees its owner is gone."""
    holder = spawn(["-c", CLAIM_AND_WAIT, str(tmp_path / "write-journal.sqlite")])
    assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
    holder.send_signal(signal.SIGKILL)
    holder.wait(10)
    started = time.monotonic()
    worker = spawn(["-m", "tests.integration.shared_journal_worker", str(tmp_path)])
    output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output
    assert time.monotonic() - started < 30  # not the 300 s lease
    assert TurnJournal(tmp_path / "write-journal.sqlite").counts("ada")["done"] == 1
