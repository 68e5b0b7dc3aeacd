"""The README and docs/USING.md tell a newcomer what `make test` costs: both give the same number
of tests and minutes, and the number is within 5% of what pytest collects."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ("README.md", "docs/USING.md")


def figures(text: str) -> tuple[set[int], set[int]]:
    """The test counts ("about 1,490 tests") and the minutes ("12 minutes") a text gives."""
    tests = {int(n.replace(",", "")) for n in re.findall(r"about (\d[\d,]*) tests\b", text)}
    minutes = {int(n) for n in re.findall(r"(\d+) minutes on \d+ cores", text)}
    return tests, minutes


def test_the_readme_and_the_guide_give_the_same_figures() -> None:
    found = {name: figures((ROOT / name).read_text(encoding="utf-8")) for name in DOCUMENTS}
    for name, (tests, minutes) in found.items():
        assert len(tests) == 1 and len(minutes) == 1, (name, tests, minutes)
    assert found["README.md"] == found["docs/USING.md"], found


@pytest.mark.slow  # pytest collects the whole suite in a fresh interpreter
def test_the_number_of_tests_is_about_what_pytest_collects() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GULFSTREAM_LOCAL_MODEL_TESTS"}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    collected = int(re.findall(r"^(\d+) tests? collected", done.stdout, re.M)[-1])
    (stated,), _ = figures((ROOT / "README.md").read_text(encoding="utf-8"))
    assert abs(stated - collected) <= collected / 20, (stated, collected)
