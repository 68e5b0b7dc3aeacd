"""An optional feature deleted by docs/CUSTOMIZING.md's steps (section 6) leaves a template that
passes ruff, mypy and the unit tests: applied to a copy of the tree, one feature per run."""

from __future__ import annotations

import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
GUIDE = ROOT / "docs" / "CUSTOMIZING.md"
BIN = Path(sys.executable).parent
# A feature's name or "all", else one at random; not GULFSTREAM_*, which tests/conftest.py clears.
CHOOSE = "DELETE_A_FEATURE"


@dataclass(frozen=True)
class Deletion:
    """One feature's table in the guide: files (and folders, ending in `/`) to delete, files
    with lines marked `# feature: <name>`, files with tests marked `@pytest.mark.uses("<name>")`,
    graphs to take out of langgraph.json."""

    feature: str
    files: tuple[str, ...]
    marked_lines_in: tuple[str, ...]
    marked_tests_in: tuple[str, ...]
    graphs: tuple[str, ...] = ()
    apps: tuple[str, ...] = ()  # keys of langgraph.json (the `http` app)


def deletions() -> dict[str, Deletion]:
    """The features section 6 of the guide says can be deleted, with their steps."""
    section = GUIDE.read_text().split("## 6. ", 1)[1].split("\n## ", 1)[0]
    found: dict[str, Deletion] = {}
    for block in section.split("\n### ")[1:]:
        name = block.split(maxsplit=1)[0]
        steps: dict[str, tuple[str, ...]] = {}
        for row in re.findall(r"^\| (delete the \w+)[^|]*\| (.+) \|$", block, re.M):
            steps[row[0]] = tuple(re.findall(r"`([^`]+)`", row[1]))
        found[name] = Deletion(
            name, steps["delete the files"], steps.get("delete the lines", ()),
            steps.get("delete the tests", ()), steps.get("delete the graphs", ()),
            steps.get("delete the app", ()),
        )  # fmt: skip
    return found


def marked(pattern: str) -> set[str]:
    """The tracked files holding `pattern`, the guide and this test aside."""
    listed = subprocess.run(
        ["git", "grep", "-l", "-F", pattern], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return set(listed) - {"docs/CUSTOMIZING.md", "tests/integration/test_delete_a_feature.py"}


def line_mark(feature: str) -> str:
    return f"# feature: {feature}"


def is_marked(line: str, feature: str) -> bool:
    """Whether `line` ends in the feature's mark (in HTML, inside a comment: `<!-- # ... -->`)."""
    return line.rstrip().removesuffix("-->").rstrip().endswith(line_mark(feature))


def uses_mark(feature: str) -> str:
    return f'@pytest.mark.uses("{feature}")'


def copy_tree(into: Path, mypy_cache: bool = True) -> None:
    """The project's files as they are in the working tree (tracked ones only), and unless
    told otherwise mypy's cache, so that the copy is checked incrementally."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    for name in filter(None, tracked):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    if mypy_cache and (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", into / ".mypy_cache")


def without_marked_tests(source: str, mark: str) -> str:
    """`source` without the test functions decorated with `mark` (decorators included)."""
    lines = source.splitlines(keepends=True)
    doomed: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            decorators = [ast.get_source_segment(source, d) for d in node.decorator_list]
            if mark.removeprefix("@") in decorators:
                first = min(d.lineno for d in node.decorator_list)
                doomed.update(range(first - 1, node.end_lineno or node.lineno))
    return "".join(line for n, line in enumerate(lines) if n not in doomed)


def delete_feature(tree: Path, deletion: Deletion) -> None:
    for name in deletion.files:
        if name.endswith("/"):
            shutil.rmtree(tree / name)
        else:
            (tree / name).unlink()
    if deletion.graphs or deletion.apps:
        manifest = json.loads((tree / "langgraph.json").read_text())
        for graph in deletion.graphs:
            del manifest["graphs"][graph]
        for key in deletion.apps:
            del manifest[key]
        (tree / "langgraph.json").write_text(json.dumps(manifest, indent=2) + "\n")
    for name in deletion.marked_lines_in:
        path = tree / name
        kept = [line for line in path.read_text().splitlines(keepends=True)
                if not is_marked(line, deletion.feature)]  # fmt: skip
        path.write_text("".join(kept))
    for name in deletion.marked_tests_in:
        path = tree / name
        path.write_text(without_marked_tests(path.read_text(), uses_mark(deletion.feature)))


# The venv's editable install maps `graph`, `memory`... to this checkout, and Python falls back on
# it for a submodule the copy lacks; this sitecustomize (run after the .pth files) takes that
# finder out, so that a deleted module is missing in the copy instead of loaded from here.
WITHOUT_EDITABLE_FINDER = """import sys
sys.meta_path[:] = [f for f in sys.meta_path if "__editable__" not in getattr(f, "__module__", "")]
"""


def site_of(tree: Path) -> Path:
    """The folder beside a copy that holds its sitecustomize."""
    return tree.parent / f"{tree.name}-site"


def write_site(tree: Path) -> None:
    """The copy's sitecustomize, written once per copy (`copy_environment` puts it on the path)."""
    site_of(tree).mkdir(exist_ok=True)
    (site_of(tree) / "sitecustomize.py").write_text(WITHOUT_EDITABLE_FINDER)


def copy_environment(tree: Path) -> dict[str, str]:
    """The environment of a command run on the copy: its packages first, then its site."""
    return {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{site_of(tree)}"}


def run(tree: Path, *command: str) -> None:
    env = copy_environment(tree)
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-4000:]}{done.stderr[-2000:]}"


def chosen(features: list[str]) -> list[str]:
    choice = os.environ.get(CHOOSE, "")
    if choice == "all":
        return features
    if choice:
        assert choice in features, f"{CHOOSE}={choice}: the guide lists {features}"
        return [choice]
    seed = random.randrange(1_000_000)
    picked = random.Random(seed).choice(features)
    print(f"deleting {picked!r} (seed {seed}; {CHOOSE}={picked} repeats it)")
    return [picked]


def test_the_guide_lists_every_marked_file_and_only_real_files() -> None:
    found = deletions()
    assert {"digests", "compaction", "consolidation", "topics", "editor"} <= set(found), found
    for feature, deletion in found.items():
        assert deletion.files, feature
        for name in deletion.files:
            assert (ROOT / name).is_dir() if name.endswith("/") else (ROOT / name).is_file(), name
        manifest = json.loads((ROOT / "langgraph.json").read_text())
        assert set(deletion.graphs) <= set(manifest["graphs"]), feature
        assert set(deletion.apps) <= set(manifest) - {"graphs"}, feature
        assert marked(line_mark(feature)) == set(deletion.marked_lines_in), feature
        assert marked(uses_mark(feature)) == set(deletion.marked_tests_in), feature


@pytest.mark.slow  # a copy of the tree, then ruff, mypy and the unit tests on it
@pytest.mark.timeout(1800)  # DELETE_A_FEATURE=all: every feature in turn, on a loaded machine
def test_a_feature_deleted_by_the_guides_steps_leaves_a_template_that_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = deletions()
    with capsys.disabled():
        features = chosen(sorted(found))
    for feature in features:
        tree = tmp_path / feature
        copy_tree(tree)
        write_site(tree)
        delete_feature(tree, found[feature])
        imports_the_copy = f"import graph; assert graph.__file__.startswith({str(tree)!r})"
        run(tree, sys.executable, "-c", imports_the_copy)
        modules = [name for name in found[feature].files if name.startswith(("graph/", "memory/"))]
        gone = [name.removesuffix("/").removesuffix(".py").replace("/", ".") for name in modules]
        still_found = f"import importlib.util as u; found = [m for m in {gone!r} if u.find_spec(m)]"
        run(tree, sys.executable, "-c", f"{still_found}; assert not found, found")
        started = time.monotonic()
        run(tree, str(BIN / "ruff"), "check", "--fix", "--quiet", ".")  # the guide's make format
        run(tree, str(BIN / "ruff"), "format", "--quiet", ".")
        run(tree, str(BIN / "ruff"), "check", ".")  # then make lint
        run(tree, str(BIN / "mypy"))
        run(tree, str(BIN / "lint-imports"), "--no-cache")  # the rest of make lint
        run(tree, sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
            "tests/unit", "-m", "not slow", "-p", "no:langsmith_plugin",
            "-p", "no:hypothesispytest")  # fmt: skip  # as make unit
        with capsys.disabled():
            print(f"\n{feature} deleted: ruff, mypy, the import contracts and the unit tests pass "
                  f"({time.monotonic() - started:.0f} s)")  # fmt: skip
