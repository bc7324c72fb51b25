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

What a package keeps private (a module or a name starting with `_`) is imported only from inside
that package: another package imports what the package's face (`__init__.py`) or a public module
exports. A package here is any folder of ours, a subpackage included (`benchmarks.generation`'s
`_backend` is private to `benchmarks.generation`, as the face re-exports it), which is stricter
than the top-level packages of the direction rule. Tests and scripts may still reach in.

A registry's lazy target (`"module:Attribute"`, `benchmarks.common.registry.Registry`) is an
import by the module that holds the registry: the direction and the private rule apply to it.
"""

from __future__ import annotations

import ast
import functools
import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
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


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per test process (every rule here walks them all);
    nothing here changes a tree."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _package_of(module: str, path: Path | None) -> str:
    """The package a module (in the file `path`) sits in, where its relative imports start
    from: a package's face is its package itself."""
    return module if path is not None and path.name == "__init__.py" else module.rpartition(".")[0]


def _imported_from(package: str, node: ast.ImportFrom) -> str:
    """The module a `from ... import` statement in `package` imports from, relative ones
    resolved."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import of one of our packages."""
    tree = _tree(path)
    package = _package_of(module, path)
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                found.append((_imported_from(package, child), child.lineno, in_function))
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
    for entry in _registry_entries():
        if _layer(entry.module) > _layer(entry.owner):
            wrong.append(entry.describe())
    assert not wrong, "imports against the direction:\n" + "\n".join(wrong)


def _halves_cross(module: str, target: str) -> bool:
    half, other = module.split(".")[0], target.split(".")[0]
    return (half == "bias" and other in ROBUSTNESS) or (half in ROBUSTNESS and other == "bias")


def test_the_two_halves_share_only_benchmarks() -> None:
    crossing = []
    for module, path in _modules():
        for target, line, _ in _imports(module, path):
            if _halves_cross(module, target):
                crossing.append(f"{path.relative_to(ROOT)}:{line} ({module}) imports {target}")
    crossing += [e.describe() for e in _registry_entries() if _halves_cross(e.owner, e.module)]
    assert not crossing, "the halves import each other:\n" + "\n".join(crossing)


# --------------------------------------------------------------------------- private imports


def _is_private(name: str) -> bool:
    """`_x` (not a dunder: `__version__`, `__future__` are public)."""
    return name.startswith("_") and not name.startswith("__")


def _package(module: str, modules: dict[str, Path]) -> str:
    """The package a module sits in (a package's face is its package itself)."""
    return _package_of(module, modules.get(module))


def _inside(module: str, package: str, modules: dict[str, Path]) -> bool:
    own = _package(module, modules)
    return own == package or own.startswith(package + ".")


def _private_owner(source: str, name: str | None, modules: dict[str, Path]) -> str | None:
    """The package whose private part `from source import name` (or `import source` when
    `name` is None) reaches, or None when all of it is public: a private module is private to
    the package holding it, a private name of a module to that module's package."""
    parts = source.split(".")
    for index, part in enumerate(parts):
        if _is_private(part):
            return ".".join(parts[:index])
    if name is not None and _is_private(name):
        return source if f"{source}.{name}" in modules else _package(source, modules)
    return None


def _face_names(package: str, modules: dict[str, Path]) -> set[str]:
    """The names a package's face binds (imports it re-exports, its own definitions)."""
    path = modules.get(package)
    if path is None or path.name != "__init__.py":
        return set()
    names: set[str] = set()
    for node in _tree(path).body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _public_face(owner: str, what: str, names: list[str], modules: dict[str, Path]) -> str:
    """What to import instead of `what` (`names`: the public names taken from a private module),
    for the failure message."""
    exported = _face_names(owner, modules)
    if names and all(n in exported for n in names):
        return f"use `from {owner} import {', '.join(names)}`"
    missing = ", ".join(n for n in names if n not in exported) or f"what it uses of {what}"
    return (
        f"export {missing} from {owner}'s face ({owner.replace('.', '/')}/__init__.py) or a "
        f"public module of {owner}, by a name without `_`, and import it from there"
    )


def _statement_imports(module: str, path: Path) -> Iterator[tuple[int, str, list[str] | None]]:
    """(line, module imported from, the names taken from it or None for `import x.y`) for every
    import of one of our packages, relative ones resolved."""
    package = _package_of(module, path)
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OURS:
                    yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            source = _imported_from(package, node)
            if source.split(".")[0] in OURS:
                yield node.lineno, source, [alias.name for alias in node.names]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _private_crossings(module: str, path: Path, modules: dict[str, Path]) -> list[str]:
    """One line per import in `module` of another package's private module or name."""
    found = []
    for line, source, names in _statement_imports(module, path):
        for name in names or [None]:
            owner = _private_owner(source, name, modules)
            if owner is None or _inside(module, owner, modules):
                continue
            what = source if name is None else f"{source}.{name}"
            # `from pkg._mod import a, b`: the public names a and b, which the face may export.
            taken = [
                n for n in names or [] if not _is_private(n) and f"{source}.{n}" not in modules
            ]
            if _private_owner(source, None, modules) is None:
                taken = []  # a private name or module of a public one: nothing public was taken
            found.append(
                f"{_shown(path)}:{line} ({module}) imports {what}, private to "
                f"{owner}: {_public_face(owner, what, taken, modules)}"
            )
            break  # one line per statement
    return found


def test_no_package_imports_what_another_keeps_private() -> None:
    modules = dict(_modules())
    reaching = [line for m, p in modules.items() for line in _private_crossings(m, p, modules)]
    for entry in _registry_entries():
        owner = _private_owner(entry.module, entry.attribute or None, modules)
        if owner is not None and not _inside(entry.owner, owner, modules):
            reaching.append(f"{entry.describe()}, private to {owner}")
    assert not reaching, "private imports across packages:\n" + "\n".join(reaching)


def test_the_private_rule_names_the_line_and_the_public_face(tmp_path: Path) -> None:
    """The rule on the imports it exists for (the ones this step removed), read from a module
    written here, so it is seen to fail: a private module whose name the face exports, a private
    module it does not, a private name, and what stays allowed (the owner's own modules, the
    face)."""
    modules = dict(_modules())
    source = tmp_path / "leak.py"
    source.write_text(
        "from benchmarks.generation._backend import Backend\n"
        "from benchmarks.loaders import _plus_check\n"
        "from perturb.blocks import SplitError, _parse_prompt\n"
        "import benchmarks.execution._wire\n"
        "from benchmarks.generation import Backend\n",
        encoding="utf-8",
    )
    found = [line.split(" ", 1)[1] for line in _private_crossings("boi.leak", source, modules)]
    assert found == [
        "(boi.leak) imports benchmarks.generation._backend.Backend, private to "
        "benchmarks.generation: use `from benchmarks.generation import Backend`",
        "(boi.leak) imports benchmarks.loaders._plus_check, private to benchmarks.loaders: export "
        "what it uses of benchmarks.loaders._plus_check from benchmarks.loaders's face "
        "(benchmarks/loaders/__init__.py) or a public module of benchmarks.loaders, by a name "
        "without `_`, and import it from there",
        "(boi.leak) imports perturb.blocks._parse_prompt, private to perturb: export what it "
        "uses of perturb.blocks._parse_prompt from perturb's face (perturb/__init__.py) or a "
        "public module of perturb, by a name without `_`, and import it from there",
        "(boi.leak) imports benchmarks.execution._wire, private to benchmarks.execution: export "
        "what it uses of benchmarks.execution._wire from benchmarks.execution's face "
        "(benchmarks/execution/__init__.py) or a public module of benchmarks.execution, by a "
        "name without `_`, and import it from there",
    ]
    lines = _private_crossings("boi.leak", source, modules)
    assert [line.startswith(f"{source}:{n} (boi.leak)") for n, line in enumerate(lines, 1)] == [
        True
    ] * 4
    inside = tmp_path / "sibling.py"
    inside.write_text("from benchmarks.generation._backend import Backend\n", encoding="utf-8")
    assert _private_crossings("benchmarks.generation.sibling", inside, modules) == []


# --------------------------------------------------------------------------- registry targets


@dataclass(frozen=True)
class _Entry:
    """One lazy registry target, read as an import by the module that holds the registry."""

    owner: str  # the module that holds the registry
    registry: str  # its name there
    name: str
    target: str  # "module:Attribute" (or "module")
    where: str  # file:line of the target string

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    @property
    def attribute(self) -> str:
        return self.target.partition(":")[2]

    def describe(self) -> str:
        return (
            f"{self.where}: {self.registry} ({self.owner}) entry {self.name!r} imports "
            f"{self.target}"
        )


# Imports every module of ours in a fresh interpreter (what the process of a test registered
# does not count), lowest layer first, and reads each Registry right after the import that
# loaded the module holding it, through its public interface: the names, and each one's target
# (`Registry.target`, which imports nothing; a registry without it maps a name to its target).
# What is there then is what the holder brings with its own imports, which the direction lets
# reach only its layer and below; what a module above registers later (perturb's ReCode
# datasets, a plugin's backend) is that module's import, not the holder's.
_READ_REGISTRIES = """
import importlib, json, sys
from benchmarks.common.registry import Registry
failed, found, seen = [], [], set()
for name in sys.argv[1:]:
    before = set(sys.modules)
    try:
        importlib.import_module(name)
    except Exception as err:
        failed.append(f"{name}: {err!r}")
    for loaded in sorted(set(sys.modules) - before):
        for attribute, value in list(vars(sys.modules[loaded]).items()):
            if isinstance(value, Registry) and (loaded, attribute) not in seen:
                seen.add((loaded, attribute))
                read = getattr(value, "target", value.__getitem__)
                targets = {key: read(key) for key in value}
                targets = {k: v for k, v in targets.items() if isinstance(v, str)}
                found.append([loaded, attribute, targets])
print(json.dumps({"failed": failed, "registries": found}))
"""


@functools.cache
def _registry_entries() -> tuple[_Entry, ...]:
    """Every lazy target every registry of ours holds once the module holding it is imported,
    with that module (the one that assigns the registry at its top level) and where the target
    string is written. A target written nowhere in our packages (an entry given as an object,
    whose target names where it was defined) is no lazy import and is left out."""
    modules = dict(_modules())
    names = sorted((m for m in modules if not m.endswith("__main__")), key=lambda m: (_layer(m), m))
    run = subprocess.run(
        [sys.executable, "-c", _READ_REGISTRIES, *names],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert run.returncode == 0, run.stderr
    read = json.loads(run.stdout)
    assert not read["failed"], "modules that do not import:\n" + "\n".join(read["failed"])
    literals: dict[str, list[str]] = {}
    assigned: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = _tree(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                literals.setdefault(node.value, []).append(where)
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                assigned.setdefault(module, set()).update(
                    t.id for t in targets if isinstance(t, ast.Name)
                )
    entries = []
    for module, attribute, targets in read["registries"]:
        if attribute not in assigned.get(module, set()):
            continue  # a registry another module holds, imported here
        for name, target in targets.items():
            for where in literals.get(target, []):
                entries.append(_Entry(module, attribute, name, target, where))
    return tuple(entries)


def test_registries_are_read() -> None:
    """The reading above finds the registries it is there for (else the rules on targets would
    pass on nothing): the backends, the datasets and the critic scorers, with their lines."""
    entries = _registry_entries()
    held = {(e.owner, e.registry) for e in entries}
    assert {
        ("benchmarks.generation._spec", "BACKENDS"),
        ("benchmarks.loaders", "DATASETS"),
        ("critic.scoring._base", "SCORERS"),
    } <= held
    hf = [e for e in entries if e.registry == "BACKENDS" and e.name == "hf"]
    assert [(e.module, e.attribute) for e in hf] == [("benchmarks.generation._hf", "HFBackend")]
    assert hf[0].where.startswith("benchmarks/generation/")
    # ReCode's datasets are perturb's to register (their lineage names its transformations):
    # the datasets benchmarks.loaders brings itself stop at benchmarks.
    datasets = {e.name: e.module for e in entries if e.registry == "DATASETS"}
    assert "humaneval" in datasets and "recode_humaneval" not in datasets


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
    package = _package_of(module, path)
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
                source = _imported_from(package, child)
                for alias in child.names:
                    submodule = f"{source}.{alias.name}"
                    targets.add(submodule if submodule in modules else source)
            visit(child)

    visit(_tree(path))
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
        return _package(module, modules)

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
