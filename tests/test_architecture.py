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


@pytest.mark.parametrize(
    "package", ["benchmarks.generation", "benchmarks.loaders", "benchmarks.report"]
)
def test_no_cycles_inside_a_package(package: str) -> None:
    graph: dict[str, set[str]] = {}
    for module, path in _modules():
        if module == package or module.startswith(package + "."):
            graph[module] = {t for t, _, _ in _imports(module, path) if t.startswith(package + ".")}
            if path.name == "__init__.py":
                graph[module] = (
                    set()
                )  # the package's face re-exports; it is imported, not importing
    state: dict[str, int] = {}
    cycle: list[str] = []

    def dfs(node: str, trail: list[str]) -> bool:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle.extend([*trail, node, nxt])
                return True
            if state.get(nxt) is None and nxt in graph and dfs(nxt, [*trail, node]):
                return True
        state[node] = 2
        return False

    for start in sorted(graph):
        if state.get(start) is None and dfs(start, []):
            break
    assert not cycle, " -> ".join(cycle)


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
