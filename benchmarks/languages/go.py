"""Go (HumanEval-X's Go prompts: `//` lines before a `func`, in `package main`).

How the sandbox builds a Go program. `go build` and `go test` cannot run in the sandbox: they
wait for the compiler with `wait4` asking for its resource usage, which the seccomp filter
refuses on purpose (a page-cache side channel, `_seccomp.py`'s item 9). The build job calls the
compiler and the linker directly (`$GOTOOLDIR/compile`, `$GOTOOLDIR/link`, with an importcfg
that names every package's archive), which is what `go build` runs itself.

The tests import testify (`github.com/stretchr/testify/assert`), which HumanEval-X vendors
(`go-evaluation/vendor.tar.gz`, fetched by `boi data fetch humaneval-x` with the dataset and
checksummed there). That tarball is trusted data, not generated code: it is compiled once per
machine outside the sandbox, by `go list -export` (CGO_ENABLED=0, so no package of the layer
and no program linked against it uses C), into boi's cache (`benchmarks.common.cache`, keyed by
the Go version and the tarball's sha256), together with the standard library's packages that a
cgo-free build needs and Go's own GOROOT does not hold. Go jobs, and only they, may read that
folder (Landlock); nothing in it is written after it is built.

How the tests run: each HumanEval-X test is one `func TestX(t *testing.T)`. A second file of
the program holds a `main` that calls `testing.Main` (the API Go keeps, under its compatibility
promise, for programs that run tests without `go test`; its signature has not changed since Go
1.0, unlike `testing.MainStart`'s, which gained fuzzing arguments in 1.18) with each test
wrapped to count it as held when it returned without failing, then a last test that prints the
end marker (" wrong" unless every test held). A test that fails, calls `t.FailNow`, panics or
exits the process (`os.Exit(0)` included) never gets the marker printed after it; the testing
package's own report and whatever the program prints go to stderr, so stdout holds the marker
alone.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from benchmarks.common.cache import cache_dir
from benchmarks.common.errors import UserError
from benchmarks.languages import Language
from benchmarks.languages.source import code_only
from benchmarks.languages.toolchain import Build, Toolchain
from benchmarks.upstream import DEFAULT_DIR, dataset, sha256_of

if TYPE_CHECKING:
    from benchmarks.problem import Problem

_RESERVED = """break case chan const continue default defer else fallthrough for func go goto if
import interface map package range return select struct switch type var true false nil iota
append cap close complex copy delete imag len make new panic print println real recover
string int int64 float64 bool byte rune error main fmt math sort strings strconv"""

# The standard-library packages a solution may use without the prompt importing them (a
# completion cannot add an import: it continues a function's body): those CodeGeeX's harness
# adds when the program names them (HumanEval-X's execution.py, IMPORT_HELPER["go"]), plus
# `unicode` and `unicode/utf8`, which solutions of the case and letter tasks name and no local
# variable is likely to shadow. A program imports one of these, or of the prompt's and the
# tests' own imports, only where its code names it: Go refuses an unused import.
_HELPER_PACKAGES = (
    "math",
    "strings",
    "fmt",
    "strconv",
    "time",
    "bytes",
    "regexp",
    "sort",
    "math/rand",
    "crypto/md5",
    "unicode",
    "unicode/utf8",
)
# What the tests need when a problem does not say (HumanEval-X's own `test_setup` for 157 of
# its 164 problems; the others add standard-library packages).
_DEFAULT_SETUP = (
    'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n'
)
_TESTIFY = "github.com/stretchr/testify/assert"
# Bumped when the way the layer is built changes, so an old layer is never read by new code.
_LAYER_VERSION = 1

# `import "path"`, `import name "path"`, `import ( ... )` at the start of a line.
_IMPORT_DECL = re.compile(r'^import[ \t]*(?:\((?P<block>[^)]*)\)|(?P<one>[^\n]*"[^"\n]*"))', re.M)
_IMPORT_SPEC = re.compile(r'^[ \t]*(?:(?P<name>[A-Za-z_]\w*|\.)[ \t]+)?"(?P<path>[^"\n]+)"', re.M)
_PACKAGE_CLAUSE = re.compile(r"^package[ \t]+\w+[ \t]*\n?", re.M)
_TEST_FUNC = re.compile(
    r"^func[ \t]+(Test\w*)[ \t]*\([ \t]*\w+[ \t]+\*[ \t]*testing\.T[ \t]*\)", re.M
)


# ---- where the Go installation and the compiled vendor layer are ------------------------------


@functools.cache
def _go_env() -> dict[str, str] | None:
    """GOROOT, GOTOOLDIR, GOVERSION, GOOS and GOARCH of the `go` on PATH (None without one).
    Run outside the sandbox, once per process."""
    go = shutil.which("go")
    if go is None:
        return None
    names = ("GOROOT", "GOTOOLDIR", "GOVERSION", "GOOS", "GOARCH")
    done = subprocess.run(
        [go, "env", *names],
        capture_output=True,
        text=True,
        env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": ""},
        timeout=60,
    )
    values = done.stdout.splitlines()
    if done.returncode != 0 or len(values) != len(names) or not all(values):
        raise UserError(
            f"`go env` failed here ({done.stderr.strip()[:300]}); check the Go install."
        )
    return dict(zip(names, values, strict=True))


def _vendor_sha256() -> str:
    """The pinned sha256 of HumanEval-X's vendor.tar.gz (`boi data fetch humaneval-x`)."""
    return next(f.sha256 for f in dataset("humaneval-x").files if f.name.endswith("vendor.tar.gz"))


def layer_dir() -> Path | None:
    """Where the compiled vendor layer lives (or will) in boi's cache on this machine: keyed
    by the Go version, its target and the pinned tarball's sha256. None without `go`."""
    env = _go_env()
    if env is None:
        return None
    key = f"{env['GOVERSION']}-{env['GOOS']}_{env['GOARCH']}-{_vendor_sha256()[:16]}-v{_LAYER_VERSION}"
    return cache_dir("go-layer") / key


def fetched_vendor_dir() -> Path:
    """Where `boi data fetch humaneval-x` puts Go's module files (go.mod, vendor.tar.gz)."""
    return Path(DEFAULT_DIR) / "humaneval-x" / "go-evaluation"


def _unready() -> str | None:
    """What Go jobs lack on this machine beyond the `go` program, with how to get it."""
    layer = layer_dir()
    if layer is None or (layer / "importcfg").is_file():
        return None
    if (fetched_vendor_dir() / "vendor.tar.gz").is_file():
        return None
    return (
        "HumanEval-X's vendored testify, which its Go tests import: run `boi data fetch "
        f"humaneval-x` (it puts go-evaluation/vendor.tar.gz in {DEFAULT_DIR}/humaneval-x/)"
    )


def _prepare() -> tuple[str, ...]:
    """The compiled layer, built now if it is not in the cache yet: the folder Go jobs read."""
    layer = layer_dir()
    if layer is None:
        raise UserError("judging Go programs needs go; install it (apt-get install golang-go).")
    if not (layer / "importcfg").is_file():
        folder = fetched_vendor_dir()
        if not (folder / "vendor.tar.gz").is_file():
            raise UserError(
                f"judging Go programs needs {_unready()}; no compiled copy is in {layer.parent} "
                "yet."
            )
        build_layer(folder)
    return (str(layer),)


def build_layer(folder: str | os.PathLike[str]) -> Path:
    """Compile the vendored testify of `folder` (HumanEval-X's go-evaluation/: go.mod and
    vendor.tar.gz, both checked against their pinned sha256) into the layer `layer_dir()`
    names, unless it is there already; return it. Outside the sandbox: the tarball is
    checksummed data, compiled by Go's own tools, and no generated code is involved."""
    layer = layer_dir()
    env = _go_env()
    if layer is None or env is None:
        raise UserError("judging Go programs needs go; install it (apt-get install golang-go).")
    if (layer / "importcfg").is_file():
        return layer
    folder = Path(folder)
    pinned = {f.name.rpartition("/")[2]: f.sha256 for f in dataset("humaneval-x").files}
    for name in ("go.mod", "vendor.tar.gz"):
        path = folder / name
        if not path.is_file():
            raise UserError(f"{path} does not exist; run `boi data fetch humaneval-x`.")
        if sha256_of(path) != pinned[name]:
            raise UserError(
                f"{path} is not HumanEval-X's pinned {name} (its sha256 differs); fetch it again "
                "with `boi data fetch humaneval-x`."
            )
    print(
        f"compiling HumanEval-X's vendored testify for Go into {layer} (once on this machine)",
        file=sys.stderr,
    )
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=layer.parent))
    try:
        module = work / "module"
        module.mkdir()
        with tarfile.open(folder / "vendor.tar.gz") as archive:
            # Checksummed, but read as any archive: regular files and folders inside `module`.
            members = archive.getmembers()
            for member in members:
                target = (module / member.name).resolve()
                inside = module.resolve() in (target, *target.parents)
                if not (member.isfile() or member.isdir()) or not inside:
                    raise UserError(
                        f"{folder / 'vendor.tar.gz'} holds {member.name!r}; fetch it again."
                    )
            archive.extractall(module, members=members)  # noqa: S202 (each member checked above)
        shutil.copyfile(folder / "go.mod", module / "go.mod")
        go_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(work),
            "GOCACHE": str(work / "gocache"),
            "GOPATH": str(work / "gopath"),
            "GOFLAGS": "-mod=vendor",
            "GOPROXY": "off",
            "GOTOOLCHAIN": "local",
            "GO111MODULE": "on",
            "GOENV": "off",
            "GOWORK": "off",
            "CGO_ENABLED": "0",
        }
        done = subprocess.run(
            [
                "go",
                "list",
                "-deps",
                "-export",
                "-f",
                "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}",
            ]
            + ["std", _TESTIFY],
            cwd=module,
            env=go_env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        if done.returncode != 0:
            raise UserError(
                f"compiling HumanEval-X's vendored testify failed ({done.stderr.strip()[-500:]})."
            )
        built = work / "layer"
        (built / "pkg").mkdir(parents=True)
        goroot = os.path.realpath(env["GOROOT"])
        lines = []
        for index, line in enumerate(sorted(done.stdout.split())):
            import_path, _, export = line.partition("=")
            if os.path.realpath(export).startswith(goroot + os.sep):
                archive_path = export  # Go's own, read where it is
            else:
                archive_path = str(layer / "pkg" / f"{index}.a")
                shutil.copyfile(export, built / "pkg" / f"{index}.a")
            lines.append(f"packagefile {import_path}={archive_path}\n")
        if not any(line.startswith(f"packagefile {_TESTIFY}=") for line in lines):
            raise UserError("compiling HumanEval-X's vendored testify gave no archive for it.")
        (built / "importcfg").write_text("".join(lines), encoding="utf-8")
        for item in (built, built / "pkg", *(built / "pkg").iterdir(), built / "importcfg"):
            item.chmod(0o755 if item.is_dir() else 0o644)  # read by the sandbox's uids
        try:
            os.rename(built, layer)
        except OSError:
            if not (layer / "importcfg").is_file():  # not another process's finished layer
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return layer


# ---- the program --------------------------------------------------------------------------------


def _imports(text: str) -> list[tuple[str, str]]:
    """The (name, path) of each import declared in `text` (name "" when not given)."""
    found = []
    for declaration in _IMPORT_DECL.finditer(text):
        body = declaration.group("block") or declaration.group("one") or ""
        for spec in _IMPORT_SPEC.finditer(body):
            found.append((spec.group("name") or "", spec.group("path")))
    return found


def _used_imports(code: str, declared: list[tuple[str, str]]) -> list[str]:
    """The import lines `code` (comments and strings blanked) needs: each declared or helper
    package whose name it qualifies an identifier with (`strings.Split`), the first of those
    that share a name; blank (`_`) and dot imports as declared."""
    lines: list[str] = []
    taken: set[str] = set()
    for name, path in [*declared, *(("", p) for p in _HELPER_PACKAGES)]:
        if name in ("_", "."):
            lines.append(f'{name} "{path}"')
            continue
        # A versioned path's package is named without its version (gopkg.in/yaml.v3: yaml).
        local = name or re.sub(r"\.v\d+$", "", path.rpartition("/")[2])
        if local in taken:
            continue
        if re.search(rf"(?<![\w.]){re.escape(local)}[ \t]*\.[ \t]*[A-Za-z_]", code):
            taken.add(local)
            lines.append(f'{name} "{path}"' if name else f'"{path}"')
    return lines


def _test_functions(test: str) -> list[str]:
    return _TEST_FUNC.findall(code_only(test, LANGUAGE))


def _assemble(problem: Problem, completion: str, marker: str) -> Build:
    """HumanEval-X's Go program: main.go holds the package clause, the imports the code uses,
    the prompt (without its own import declarations), the completion and the test; boi_main.go
    holds the `main` that runs the tests through `testing.Main` and prints the end marker
    after the last one held (see the module's docstring)."""
    setup = str(problem.metadata.get("test_setup") or _DEFAULT_SETUP)
    prompt = problem.prompt
    declared = _imports(setup) + _imports(prompt)
    body = _IMPORT_DECL.sub("", _PACKAGE_CLAUSE.sub("", prompt, count=1))
    code = f"{body}{completion}\n{problem.test}"
    tests = _test_functions(problem.test)
    if not tests:
        raise ValueError("its Go test defines no func TestX(t *testing.T)")
    imports = _used_imports(code_only(code, LANGUAGE), declared)
    header = "package main\n\n" + (
        "import (\n" + "".join(f"    {line}\n" for line in imports) + ")\n\n" if imports else ""
    )
    wrapped = "".join(
        f'        {{Name: "{name}", F: func(t *testing.T) {{ {name}(t); '
        "if !t.Failed() { held++ } }},\n"
        for name in tests
    )
    runner = (
        'package main\n\nimport (\n    "os"\n    "testing"\n)\n\n'
        "func main() {\n    out := os.Stdout\n    os.Stdout = os.Stderr\n    held := 0\n"
        "    testing.Main(\n        func(string, string) (bool, error) { return true, nil },\n"
        f"        []testing.InternalTest{{\n{wrapped}"
        '        {Name: "BoiEndOfTests_", F: func(*testing.T) {\n'
        f"            if held == {len(tests)} {{\n"
        f'                out.WriteString("\\n{marker}\\n")\n            }} else {{\n'
        f'                out.WriteString("\\n{marker} wrong\\n")\n            }}\n'
        "        }},\n        },\n        nil,\n        nil,\n    )\n}\n"
    )
    env = _go_env() or {"GOROOT": "", "GOTOOLDIR": ""}  # without go, never run: the pool refuses
    tools = Path(env["GOTOOLDIR"])
    layer = layer_dir() or Path("go-layer")
    importcfg = str(layer / "importcfg")
    return Build(
        files={"main.go": header + code, "boi_main.go": runner},
        compile=(
            (str(tools / "compile"), "-o", "main.a", "-p", "main", "-complete")
            + ("-nolocalimports", "-importcfg", importcfg, "-pack", "main.go", "boi_main.go"),
            (str(tools / "link"), "-o", "main", "-importcfg", importcfg, "-buildmode=exe")
            + ("-s", "-w", "main.a"),
        ),
        run=("./main",),
        # One thread of Go code in each step: the sample's process cap counts threads.
        env={"GOROOT": env["GOROOT"], "GOMAXPROCS": "1", "CGO_ENABLED": "0"},
    )


TOOLCHAIN = Toolchain(
    programs=("go",),
    install="apt-get install golang-go (Debian, Ubuntu)",
    assemble=_assemble,
    probe=(
        "func Add(a int, b int) int {\n",
        "    return a + b\n}\n",
        "func TestAdd(t *testing.T) {\n    assert := assert.New(t)\n"
        "    assert.Equal(5, Add(2, 3))\n}\n",
    ),
    # GOROOT (the compiler, the linker, the standard library's archives) is in the default
    # read set (/usr/lib/go-*); the compiled vendor layer is `_prepare`'s.
    compile_timeout=30.0,
    run_timeout=3.0,
    prepare=_prepare,
    unready=_unready,
)

LANGUAGE = Language(
    name="go",
    display_name="Go",
    toolchain=TOOLCHAIN,
    extension=".go",
    naming="PascalCase",
    reserved_words=frozenset(_RESERVED.split()),
    string_quotes="\"'`",
    # `func Name(` (a method's receiver before the name allowed).
    function_definition=r"^func[ \t]+(?:\([^)\n]*\)[ \t]*)?(?P<name>[A-Za-z_]\w*)[ \t]*[\[(]",
    parameter_name="first",
    stop=("\n}", "\n```"),
    fence_tags=frozenset({"go", "golang"}),
)
