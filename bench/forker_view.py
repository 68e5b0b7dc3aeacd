"""What a forker meets: the app's size, what it imports of the library, and the library's face.

Run: `.venv/bin/python bench/forker_view.py [--root DIR]`. Reads the source tree only (any version
of the project): graph/ + prompts/ lines and files; the memory modules graph/ and webapp/ import
(every import statement, in functions too) and how many reach two levels down; the names the
library's faces export (`__all__` of `memory` and `memory.integration`, where they exist).
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FACES = ("memory/__init__.py", "memory/integration/__init__.py")


def python_files(root: Path, package: str) -> list[Path]:
    return sorted((root / package).rglob("*.py")) if (root / package).is_dir() else []


def memory_imports(files: list[Path]) -> set[str]:
    """The memory modules these files import (`from memory.x import y` counts memory.x)."""
    found: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            found |= {name for name in names if name == "memory" or name.startswith("memory.")}
    return found


def exported(root: Path) -> dict[str, int]:
    """`__all__`'s length per face module (0 when the module has none)."""
    counts = {}
    for face in FACES:
        path = root / face
        if not path.is_file():
            continue
        count = 0
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = node.value  # type: ignore[union-attr]
                count = len(value.elts) if isinstance(value, ast.List | ast.Tuple) else 0
        counts[face] = count
    return counts


def recipes(root: Path) -> dict[str, list[str]]:
    """The files each numbered recipe of docs/CUSTOMIZING.md has you edit (its "| edit |" table's
    first column); a recipe without such a table (deleting a feature's code) is left out."""
    guide = root / "docs" / "CUSTOMIZING.md"
    found: dict[str, list[str]] = {}
    if not guide.is_file():
        return found
    for section in guide.read_text(encoding="utf-8").split("\n## ")[1:]:
        title, _, body = section.partition("\n")
        if "| edit |" not in body:
            continue
        files: list[str] = []
        for row in body.split("| edit |", 1)[1].splitlines()[2:]:
            if not row.startswith("| `"):
                break
            path = row.split("`")[1]
            if path not in files:
                files.append(path)
        found[title.strip()] = files
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    root = parser.parse_args().root.resolve()
    app = python_files(root, "graph") + python_files(root, "prompts")
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in app)
    print(f"graph/ + prompts/: {lines} lines in {len(app)} files")
    for package in ("graph", "webapp"):
        modules = memory_imports(python_files(root, package))
        deep = [m for m in modules if m.count(".") >= 2]
        print(f"{package}/ imports {len(modules)} memory modules, {len(deep)} two levels down")
    faces = exported(root)
    for face, count in faces.items():
        print(f"{face}: {count} names")
    print(f"public names in all: {sum(faces.values())}")
    for title, files in recipes(root).items():
        print(f"recipe {title}: {len(files)} file(s) to edit: {', '.join(files)}")


if __name__ == "__main__":
    main()
