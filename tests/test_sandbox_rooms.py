"""The worker in rooms (issue 33, item 4): `_zygote.py` and its siblings import only the standard
library and each other, load by path inside the worker (one copy of each, none registered in
sys.modules), import as `benchmarks.execution.X` in the harness's process, and the harness and
the other packages import no module of the worker but `_wire`."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXECUTION = ROOT / "benchmarks" / "execution"
# Each module of the worker and the siblings it may use (loaded by path in the worker).
ROOMS = {
    "_zygote": {
        "_kernel",
        "_wire",
        "_setup",
        "_candidate",
        "_tests_side",
        "_spawner",
        "_builder",
        "_landlock",
        "_seccomp",
    },
    "_setup": {"_kernel", "_wire"},
    "_spawner": {"_kernel", "_wire", "_candidate", "_builder"},
    "_builder": {"_kernel", "_wire"},
    "_candidate": {"_wire"},
    "_tests_side": {"_kernel", "_wire"},
    "_wire": set(),
    "_kernel": set(),
    "_landlock": set(),
    "_seccomp": set(),
}
OURS = ("benchmarks", "perturb", "critic", "finetune", "bias", "boi")


def _relative_imports(path: Path) -> set[str]:
    """The modules of its own package a module imports (`from . import X`), type-only ones
    (under `if TYPE_CHECKING:`) left out."""
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                top = name.split(".")[0]
                assert top in sys.stdlib_module_names or top == "__future__", (path.name, name)
    return found


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_each_room_imports_the_standard_library_and_its_own_siblings(room):
    assert _relative_imports(EXECUTION / f"{room}.py") <= ROOMS[room]


def test_the_worker_loads_by_path_imports_only_the_standard_library():
    # As `python -I _zygote.py` does (its name is not __main__ here, so main() does not run).
    code = (
        "import importlib.util, json, sys\n"
        "before = set(sys.modules)\n"
        f"spec = importlib.util.spec_from_file_location('boi_zygote', {str(EXECUTION / '_zygote.py')!r})\n"
        "zygote = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(zygote)\n"
        "new = sorted({m.split('.')[0] for m in set(sys.modules) - before})\n"
        "shared = [zygote._spawner._candidate is zygote._candidate,\n"
        "          zygote._spawner._wire is zygote._wire is zygote._candidate._wire,\n"
        "          zygote._tests_side._wire is zygote._wire,\n"
        "          zygote._tests_side._kernel is zygote._kernel is zygote._spawner._kernel,\n"
        "          zygote._setup._kernel is zygote._kernel and zygote._setup._wire is zygote._wire]\n"
        "print(json.dumps({'new': new, 'shared': shared, 'file': zygote._wire.__file__}))\n"
    )
    run = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert [m for m in got["new"] if m not in sys.stdlib_module_names] == []
    assert got["shared"] == [True, True, True, True, True]
    assert Path(got["file"]) == EXECUTION / "_wire.py"


def test_the_package_imports_one_copy_of_each_room():
    zygote = importlib.import_module("benchmarks.execution._zygote")
    for name in ("_kernel", "_wire", "_setup", "_candidate", "_tests_side", "_spawner", "_builder"):
        module = importlib.import_module(f"benchmarks.execution.{name}")
        assert getattr(zygote, name) is module
    spawner = importlib.import_module("benchmarks.execution._spawner")
    assert spawner._candidate is zygote._candidate


def test_the_harness_imports_only_the_wire_of_the_worker():
    internal = {f"benchmarks.execution.{room}" for room in ROOMS if room != "_wire"}
    wrong = []
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.parent == EXECUTION and path.stem in ROOMS:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom) and node.module:
                    base = node.module
                    if node.level and path.parent == EXECUTION:
                        base = f"benchmarks.execution.{node.module}"
                    names = [base] + [f"{base}.{alias.name}" for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level and path.parent == EXECUTION:
                    names = [f"benchmarks.execution.{alias.name}" for alias in node.names]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                wrong += [f"{path.relative_to(ROOT)} imports {n}" for n in names if n in internal]
    assert not wrong, "\n".join(wrong)


def test_the_rooms_are_linted_and_type_checked_like_the_rest():
    # Issue 47: the split is done, so bandit, flake8-simplify, ruff's own rules and mypy's
    # warn_return_any reach the sandbox as every other package; a finding there gets a
    # targeted noqa comment that names its code and reason, not an exemption of the directory.
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    ignored = config["tool"]["ruff"]["lint"].get("per-file-ignores", {})
    assert [p for p in ignored if p.startswith("benchmarks/execution")] == []
    for override in config["tool"]["mypy"].get("overrides", []):
        modules = override["module"]
        modules = [modules] if isinstance(modules, str) else modules
        assert not [m for m in modules if m.startswith("benchmarks.execution")], override


def test_a_spawner_message_that_is_not_an_object_is_a_spawn_failure():
    import socket

    spawner = importlib.import_module("benchmarks.execution._spawner")
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        client = spawner.SpawnerClient(ours)
        theirs.send(b"[1, 2]")
        # At once, not after the 30 s the spawner is given to answer.
        with pytest.raises(spawner.SpawnFailed, match="other than an object"):
            client.spawn({"kind": "candidate"}, [], 0.0)
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_no_room_reaches_into_another_rooms_private_names(room):
    # Issue 47: the spawner and the tests process get narrow handles from the set-up room
    # (`Setup.enter_sample`, `Setup.enter_tests_process`), not the worker's private methods
    # (they called `zygote._become_sample`, `zygote._enter_own_namespaces`, `zygote._tests_dir`).
    tree = ast.parse((EXECUTION / f"{room}.py").read_text(encoding="utf-8"))
    reached = [
        f"{room}.py:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and ast.unparse(node.value) not in ("self", "cls")
        and ast.unparse(node) != "os._exit"
    ]
    assert not reached, "\n".join(reached)
