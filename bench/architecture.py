"""Architecture figures: packages, modules, import arrows, circles and the longest module.

Run: `.venv/bin/python bench/architecture.py [--circles]`. Reads the project's own imports with
grimp (every import statement: module level, inside functions and under `TYPE_CHECKING`), so a
circle hidden behind a late import still counts.

- a "place" is what sits at the top of graph/, memory/, prompts/ or webapp/: a loose module or a
  package; arrows between places are counted once per pair;
- a "circle" is a set of places (or of modules) that import each other, directly or not; an
  "arrow back up" is an arrow inside such a set (with no circle every arrow points one way);
- "layers" is the longest chain of places, each importing the next, once circles are merged;
- a module over 300 lines should say why in its docstring ("Long because …").

It reads only the source tree, so it measures any version of the project.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = tuple(p for p in ("graph", "memory", "prompts", "webapp") if (ROOT / p).is_dir())


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's components, iteratively (the module graph is deep enough to hit recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


def layers(nodes: set[str], edges: dict[str, set[str]], components: list[set[str]]) -> int:
    """The longest chain of imports once each circle is merged into one node."""
    owner = {node: i for i, component in enumerate(components) for node in component}
    merged: dict[int, set[int]] = defaultdict(set)
    for source, targets in edges.items():
        for target in targets:
            if owner[source] != owner[target]:
                merged[owner[source]].add(owner[target])
    depth: dict[int, int] = {}

    def longest(node: int) -> int:
        if node not in depth:
            depth[node] = 1 + max((longest(child) for child in merged[node]), default=0)
        return depth[node]

    sys.setrecursionlimit(10_000)
    return max((longest(owner[node]) for node in nodes), default=0)


def module_text(module: str, packages: set[str]) -> str:
    path = ROOT / module.replace(".", "/")
    file = path / "__init__.py" if module in packages else path.with_suffix(".py")
    return file.read_text(encoding="utf-8")


def place_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--circles", action="store_true", help="list the members of each circle")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    modules = set(graph.modules)
    packages = {m for m in modules if (ROOT / m.replace(".", "/") / "__init__.py").exists()}
    module_edges: dict[str, set[str]] = defaultdict(set)
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported in modules and imported != module:
                module_edges[module].add(imported)
    places = {place_of(m) for m in modules if m.count(".") >= 1}
    place_edges: dict[str, set[str]] = defaultdict(set)
    for source, targets in module_edges.items():
        for target in targets:
            if source.count(".") and target.count(".") and place_of(source) != place_of(target):
                place_edges[place_of(source)].add(place_of(target))
    place_components = strongly_connected(places, place_edges)
    module_components = strongly_connected(modules, module_edges)
    place_circles = [c for c in place_components if len(c) > 1]
    module_circles = [c for c in module_components if len(c) > 1]
    circle_of = {p: i for i, c in enumerate(place_circles) for p in c}
    back_up = sum(
        1
        for source, targets in place_edges.items()
        for target in targets
        if source in circle_of and circle_of.get(target) == circle_of[source]
    )
    lines = {module: len(module_text(module, packages).splitlines()) for module in modules}
    longest = max(lines, key=lambda m: lines[m])
    loose_memory = sorted(p for p in places if p.startswith("memory.") and p not in packages)
    over = sorted((m for m in lines if lines[m] > 300), key=lambda m: -lines[m])
    texts = {m: module_text(m, packages) for m in over}
    unexplained = [
        m for m in over if "Long because" not in (ast.get_docstring(ast.parse(texts[m])) or "")
    ]
    print(f"packages                 {len(packages)}")
    print(f"modules                  {len(modules - packages)} (+ {len(packages)} __init__)")
    print(f"places (top of each)     {len(places)}; loose at memory/'s top: {len(loose_memory)}")
    print(f"arrows between places    {sum(len(t) for t in place_edges.values())}")
    print(f"arrows between modules   {sum(len(t) for t in module_edges.values())}")
    print(f"layers of places         {layers(places, place_edges, place_components)}")
    print(f"arrows back up (places)  {back_up}")
    print(f"circles of places        {len(place_circles)}")
    print(f"circles of modules       {len(module_circles)}")
    print(f"longest module           {longest} ({lines[longest]} lines)")
    print(f"modules over 300 lines   {len(over)}: {', '.join(f'{m} {lines[m]}' for m in over)}")
    print(f"  without a reason       {len(unexplained)}: {', '.join(unexplained) or 'none'}")
    if args.circles:
        for kind, circles in (("places", place_circles), ("modules", module_circles)):
            for circle in sorted(circles, key=len, reverse=True):
                print(f"circle of {len(circle)} {kind}: {' '.join(sorted(circle))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
