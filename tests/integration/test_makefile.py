"""`make help`, `make format` and the feature targets as a user runs them (real make; the venv's
tools stand in for the missing .venv through `STAMP= BIN=`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
MARK = re.compile(r"\s+# feature: [\w-]+$")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make(*args: str, cwd: Path = ROOT, bin_dir: Path = BIN) -> subprocess.CompletedProcess[str]:
    command = ["make", "--no-print-directory", *args, "STAMP=", f"BIN={bin_dir}"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_help_shows_the_port_and_no_make_syntax() -> None:
    shown = make("help")
    assert shown.returncode == 0, shown.stderr
    assert "$(" not in shown.stdout and "# feature" not in shown.stdout, shown.stdout
    assert "http://127.0.0.1:2024 " in shown.stdout
    assert "http://127.0.0.1:3000 " in make("help", "PORT=3000").stdout


def commands_in(text: str) -> set[str]:
    return set(re.findall(r"(?<![\w/])/[a-z]+\b", text))


def test_the_chat_help_names_the_commands_the_chat_offers() -> None:
    """Every command it names is one the chat offers, and it names every one that no optional
    feature brings (those go with their feature; the chat lists them as it starts)."""
    line = next(x for x in (ROOT / "Makefile").read_text().splitlines() if x.startswith("chat:"))
    named = commands_in(line.split("##", 1)[1])
    source = (ROOT / "graph" / "cli" / "chat.py").read_text()
    help_lines = source.split("\nHELP = (\n", 1)[1].split("\n)\n", 1)[0].splitlines()
    offered = commands_in("\n".join(help_lines))
    core = commands_in("\n".join(x for x in help_lines if not MARK.search(x)))
    assert {"/memories", "/forget", "/quit"} <= core < offered
    assert core <= named <= offered, (named, offered)


def marked_targets() -> list[str]:
    """The targets with a recipe line marked `# feature: <name>` (deleted with the feature)."""
    targets, target = [], ""
    for line in (ROOT / "Makefile").read_text().splitlines():
        if re.match(r"^[a-z-]+:", line):
            target = line.split(":", 1)[0]
        elif line.startswith("\t") and MARK.search(line) and target not in targets:
            targets.append(target)
    return targets


def test_make_prints_no_feature_marker_of_a_recipe(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\nexit 0\n")  # the command is not the point
    (fake / "python").chmod(0o755)
    targets = marked_targets()
    lines = (ROOT / "Makefile").read_text().splitlines()
    marked_rules = {x.split(":")[0] for x in lines if re.match("[a-z-]+:", x) and MARK.search(x)}
    assert set(targets) == marked_rules  # a marked rule's recipe is marked too
    for target in targets:
        done = make(target, bin_dir=fake)
        assert done.returncode == 0, done.stderr
        assert "# feature" not in done.stdout + done.stderr, (target, done.stdout)


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


def test_make_erase_after_make_import_chats_leaves_nothing_named_after_the_user(
    tmp_path: Path,
) -> None:
    """`make import-chats ... USER=erin` then `make erase USER=erin YES=1`, in a copy of the
    project with no .env: afterwards no file or folder under data/ is named after erin (the
    archive's erin.sqlite was deleted and opened again at once), and the hint given without a
    terminal names the make variable that works."""
    from tests.e2e.server import copy_app

    project = copy_app(tmp_path / "project")
    shutil.copy2(ROOT / "Makefile", project / "Makefile")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GULFSTREAM_", "OPENAI_"))}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = ["make", "--no-print-directory", *args, "STAMP=", f"BIN={BIN}"]
        return subprocess.run(
            command, cwd=project, env=env, capture_output=True, text=True, timeout=300,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip

    imported = run("import-chats", f"FILE={ROOT / 'tests/data/import_chats.jsonl'}", "USER=erin")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    named = [p for p in (project / "data").rglob("*") if "erin" in p.name]
    assert named, sorted(project.rglob("*"))

    asked = run("erase", "USER=erin")
    assert asked.returncode != 0 and "YES=1" in asked.stderr and "--yes" not in asked.stderr
    assert [p for p in (project / "data").rglob("*") if "erin" in p.name] == named

    erased = run("erase", "USER=erin", "YES=1")
    assert erased.returncode == 0, erased.stdout + erased.stderr
    assert "removed" in erased.stdout and "erin.sqlite" in erased.stdout, erased.stdout
    left = [str(p.relative_to(project)) for p in (project / "data").rglob("*") if "erin" in p.name]
    assert left == []
