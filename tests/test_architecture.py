"""The shape of the code: dependencies run one way, and imports sit at the top of modules.

    benchmarks.common  <-  benchmarks  <-  perturb  <-  critic  <-  finetune  <-  boi
                                     <-  bias  <-----------------------------------  boi

A package may import the packages to its left, never those to its right, and
`benchmarks.common` imports nothing of boi's but itself. The social-bias half (`bias`) stands
on `benchmarks` alone: it shares backends, sandbox, statistics and report with the robustness
half (perturb, critic, finetune), never their code. An import inside a function is allowed
only for an optional or heavy third-party dependency (torch, transformers, vllm, matplotlib,
datasets, datasketch), which keeps `import perturb` and `boi --help` fast; a module of ours
imported inside a function usually hides a cycle.
"""

from __future__ import annotations

import ast
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["benchmarks.common", "benchmarks", "perturb", "critic", "finetune", "bias", "boi"]
OURS = ("benchmarks", "perturb", "critic", "finetune", "bias", "boi")
ROBUSTNESS = ("perturb", "critic", "finetune")


def _layer(module: str) -> int:
    """Index in LAYERS of the layer `module` belongs to (the longest matching prefix)."""
    best = -1
    for index, name in enumerate(LAYERS):
        if (module == name or module.startswith(name + ".")) and (
            best < 0 or len(name) > len(LAYERS[best])
        ):
            best = index
    return best


def _modules() -> list[tuple[str, Path]]:
    out = []
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out.append((name, path))
    return out


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import of one of our packages."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join([*base, child.module] if child.module else base)
                else:
                    target = child.module or ""
                found.append((target, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return [(name, line, inside) for name, line, inside in found if name.split(".")[0] in OURS]


def test_dependencies_run_one_way() -> None:
    wrong = []
    for module, path in _modules():
        own = _layer(module)
        for target, line, _ in _imports(module, path):
            if _layer(target) > own:
                wrong.append(f"{path.relative_to(ROOT)}:{line} ({module}) imports {target}")
    assert not wrong, "imports against the direction:\n" + "\n".join(wrong)


def test_the_two_halves_share_only_benchmarks() -> None:
    crossing = []
    for module, path in _modules():
        half = module.split(".")[0]
        for target, line, _ in _imports(module, path):
            other = target.split(".")[0]
            if (half == "bias" and other in ROBUSTNESS) or (half in ROBUSTNESS and other == "bias"):
                crossing.append(f"{path.relative_to(ROOT)}:{line} ({module}) imports {target}")
    assert not crossing, "the halves import each other:\n" + "\n".join(crossing)


def test_no_internal_imports_inside_functions() -> None:
    hidden = []
    for module, path in _modules():
        for target, line, inside in _imports(module, path):
            if inside:
                hidden.append(f"{path.relative_to(ROOT)}:{line} imports {target} in a function")
    assert not hidden, "internal imports inside functions:\n" + "\n".join(hidden)


def _runtime_graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports when it runs: every import statement (those
    inside functions too) but those under `if TYPE_CHECKING:`, which never run. `from P import
    name` is an import of the module `P.name` when there is one (what Python imports then),
    else of `P` itself."""
    modules = dict(_modules())
    return {
        module: {t for t in _runtime_imports(module, path, modules) if t != module}
        for module, path in modules.items()
    }


def _runtime_imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]))
                continue
            if isinstance(child, ast.Import):
                targets.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    source = ".".join([*base, child.module] if child.module else base)
                else:
                    source = child.module or ""
                for alias in child.names:
                    submodule = f"{source}.{alias.name}"
                    targets.add(submodule if submodule in modules else source)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return targets & set(modules)


def _is_type_checking(test: ast.expr) -> bool:
    """`TYPE_CHECKING` or `typing.TYPE_CHECKING` alone (not `TYPE_CHECKING or ...`)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of `graph`: one per strongly connected component of more than one node
    (Tarjan), the path from its first node back to it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    cycles = []
    for component in components:
        start = min(component)
        paths = {start: [start]}
        queue = [start]
        while queue:
            node = queue.pop(0)
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    cycles.append([*paths[node], start])
                    queue = []
                    break
                if nxt in component and nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    queue.append(nxt)
    return cycles


@pytest.mark.parametrize("package", OURS)
def test_no_import_cycles_between_modules(package: str) -> None:
    """No module of the package (subpackages included) imports, through any chain, a module
    that imports it back."""
    ours = [c for c in _cycles(_runtime_graph()) if any(m.split(".")[0] == package for m in c)]
    assert not ours, "import cycles:\n" + "\n".join(" -> ".join(c) for c in ours)


@pytest.mark.parametrize("package", OURS)
def test_no_import_cycles_between_a_package_and_its_subpackages(package: str) -> None:
    """Every package and subpackage counted as one node (a module as the package it sits in):
    a module of `boi` that imports boi.analysis while an analysis imports that module is a
    cycle between the two even where no module imports itself back (boi.runner ->
    boi.analysis -> boi.analysis.minimal -> boi.runner): the rooms of boi
    (docs/architecture.md) stand on its orchestration modules (runner, reporting, run_reader,
    ...), never the reverse. A package's face (`__init__.py`) is imported as its package, and
    what it imports itself is left out, as faces re-export and register their subpackages
    (perturb's imports perturb.recode)."""
    modules = dict(_modules())

    def room(module: str) -> str:
        return module if modules[module].name == "__init__.py" else module.rpartition(".")[0]

    graph: dict[str, set[str]] = {}
    seen: dict[tuple[str, str], str] = {}  # (room, room) -> one import between them
    for module, targets in sorted(_runtime_graph().items()):
        if module.split(".")[0] != package or modules[module].name == "__init__.py":
            continue
        for target in sorted(targets):
            edge = (room(module), room(target))
            if target.split(".")[0] == package and edge[0] != edge[1]:
                graph.setdefault(edge[0], set()).add(edge[1])
                seen.setdefault(edge, f"{module} imports {target}")
    found = [
        " -> ".join(cycle) + " (" + "; ".join(seen[e] for e in itertools.pairwise(cycle)) + ")"
        for cycle in _cycles(graph)
    ]
    assert not found, "import cycles between packages:\n" + "\n".join(found)


def test_boi_help_imports_no_heavy_library() -> None:
    """`boi --help` builds every command's flags, so it imports every stage's config: the
    stages must keep torch, transformers, vLLM, matplotlib, datasets and datasketch (with its
    scipy) out of their imports."""
    code = (
        "import sys\n"
        "from boi.cli import make_parser\n"
        "make_parser()\n"
        "heavy = ('torch', 'transformers', 'vllm', 'matplotlib', 'datasets', 'httpx2', 'keybert',\n"
        "         'datasketch', 'scipy', 'ray')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
