"""`make format` as a user runs it (real make; the venv's tools stand in for the missing .venv
through `STAMP= BIN=`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(*args: str, cwd: Path = ROOT, bin_dir: Path = BIN) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", *args, "STAMP=", f"BIN={bin_dir}"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project with this Makefile and ruff configuration, and one Python file."""
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


UNFORMATTED = "import os\nimport sys\nx=1\ndef f( a ):\n    return a{}\n"


def ruff_passes(project: Path, *args: str) -> bool:
    done = subprocess.run([str(BIN / "ruff"), *args], cwd=project, capture_output=True)
    return done.returncode == 0


def test_format_formats_and_fixes_and_then_fails_on_what_is_left(project: Path) -> None:
    (project / "code.py").write_text(UNFORMATTED.format(" + undefined_name"))
    done = make("format", cwd=project)
    assert done.returncode != 0  # a lint error is left
    assert "F821" in done.stdout and "undefined_name" in done.stdout  # and listed
    assert ruff_passes(project, "format", "--check", ".")  # formatted all the same
    assert "import" not in (project / "code.py").read_text()  # and fixed


def test_format_leaves_what_make_lint_checks_with_ruff_green(project: Path) -> None:
    (project / "code.py").write_text(UNFORMATTED.format(""))
    done = make("format", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ruff_passes(project, "check", ".") and ruff_passes(project, "format", "--check", ".")
