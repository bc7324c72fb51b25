"""Programs of other languages than Python judged in the sandbox (job mode "build", issue 46):
the statuses, the end marker that a pass needs, and hostile programs per language (files
outside scratch, network, processes, memory, output, time, compile-time attacks, state for the
next sample, the verdict's descriptors), as root and in the container-like run.

One pool for the module (every worker proves each toolchain once), and each language's samples
go to it as one batch, so the compiles run on every worker at once. A toolchain this machine
lacks skips its tests, except where BOI_REQUIRE_TOOLCHAINS=1 (`.ci/run`) says it must be there.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, WorkerPool, execute_samples
from benchmarks.execution._pool import build_job, probe_problem
from benchmarks.execution._run import _harness_deadline, problem_defect
from benchmarks.languages import go, language_named
from benchmarks.loaders.humaneval_x import load_humaneval_x
from benchmarks.problem import Problem
from boi.commands.execute import judged_languages
from tests.conftest import SHARED_DATA
from tests.sandbox_helpers import EXPECTED_LEVEL

LANGUAGES = ("cpp", "javascript", "java", "go")
RUN_TIMEOUT = 3.0
COMPILE_TIMEOUT = 60.0
# A file every user may read, and one of the repository: a sample must read neither.
READABLE = "/etc/passwd"
REPOSITORY_FILE = str(Path(__file__).resolve())


def _available(language: str) -> bool:
    toolchain = language_named(language).toolchain
    assert toolchain is not None
    missing = toolchain.missing()
    if missing and os.environ.get("BOI_REQUIRE_TOOLCHAINS") == "1":
        pytest.fail(f"{', '.join(missing)} missing, but BOI_REQUIRE_TOOLCHAINS=1: install it")
    if language == "go" and not missing:
        # Go's tests import testify: its compiled layer must be in the cache, or be built now
        # from HumanEval-X's vendored copy (../shared; skipped cleanly without it).
        layer = go.layer_dir()
        assert layer is not None
        if not (layer / "importcfg").is_file():
            if not (GO_VENDOR / "vendor.tar.gz").is_file():
                return False
            go.build_layer(GO_VENDOR)
    return not missing


# Go's compiled layer lives in boi's cache; the tests keep one where every uid can reach it, so
# that the container-like run (no mount namespace to expose a cache under a 0700 /root) and the
# run as root build it once and share it.
GO_CACHE = Path(tempfile.gettempdir()) / f"boi-test-cache-{os.getuid()}"
GO_VENDOR = SHARED_DATA / "humaneval-x" / "go-evaluation"


def go_cache() -> str:
    """GO_CACHE, made if missing: ours, not a link, open to every uid."""
    GO_CACHE.mkdir(mode=0o755, exist_ok=True)
    assert GO_CACHE.stat().st_uid == os.getuid() and not GO_CACHE.is_symlink()
    GO_CACHE.chmod(0o755)
    return str(GO_CACHE)


@pytest.fixture(scope="module")
def pool():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("BOI_CACHE_DIR", go_cache())
        languages = [language for language in LANGUAGES if _available(language)]
        if not languages:
            pytest.skip("no toolchain of another language here")
        config = ExecutionConfig(workers=2, memory_mb=2048, processes=64, timeout=RUN_TIMEOUT)
        with WorkerPool(config, languages=languages) as pool:
            assert pool.isolation.level == EXPECTED_LEVEL
            yield pool


# What the hostile C++ samples call beyond the headers every C++ program gets (fork, read,
# socket).
PRELUDES = {
    "cpp": "#include<unistd.h>\n#include<sys/socket.h>\n",
    # Only those the completion names are imported (Go refuses an unused import); "embed" for
    # the //go:embed attempt.
    "go": 'import (\n    "fmt"\n    "net"\n    "os"\n    "os/exec"\n    "syscall"\n'
    '    _ "embed"\n)\n\n',
}


def problem(language: str) -> Problem:
    """The toolchain's own known-good problem (`add(2, 3) == 5`)."""
    probe, _ = probe_problem(language)
    return dataclasses.replace(
        probe,
        task_id=f"t/{language}",
        benchmark="test",
        prompt=PRELUDES.get(language, "") + probe.prompt,
    )


def judge_all(
    pool: WorkerPool, language: str, completions: dict[str, str], prompt_before: str = ""
) -> dict[str, dict]:
    if language not in pool.languages:
        pytest.skip(f"no {language} toolchain here")
    names = list(completions)
    jobs = []
    for index, name in enumerate(names):
        task = problem(language)
        if name in CGO:  # a prompt of its own: cgo's import "C" before the function
            task = dataclasses.replace(task, prompt=CGO[name] + task.prompt)
        job = build_job(task, completions[name], RUN_TIMEOUT, COMPILE_TIMEOUT)
        jobs.append((index, {**job, "id": index}, _harness_deadline(job)))
    return {names[index]: outcome for index, outcome in pool.map(jobs)}


# Which limit ends a flood of output or of memory first depends on the machine's load (the
# time limit can come before the file-size or memory limit on a busy CI machine): either ends
# the sample as a failure, and that, not which of the two, is what a user relies on.
EITHER_LIMIT = ("runtime error", "timed out")


def check(outcomes: dict[str, dict], expected: dict[str, str | tuple[str, ...]]) -> None:
    got = {name: outcomes[name]["status"] for name in expected}
    wrong = {
        name: status
        for name, status in got.items()
        if status != expected[name]
        and not (isinstance(expected[name], tuple) and status in expected[name])
    }
    assert not wrong, {name: (got[name], outcomes[name]["result"][:300]) for name in wrong}


CPP = {
    "right": "    return a + b;\n}\n",
    "wrong": "    return a - b;\n}\n",
    "exit_early": "    exit(0);\n}\n",
    "prints_success": '    printf("passed\\nOK\\n"); fflush(stdout); _exit(0);\n}\n',
    "syntax": "    return a +;\n}\n",
    "crash": "    int *p = nullptr; return *p;\n}\n",
    # Passes only where the file cannot be read.
    "read_outside": f'    return fopen("{READABLE}", "r") ? 0 : a + b;\n}}\n',
    "write_outside": f'    return fopen("{REPOSITORY_FILE}.w", "w") ? 0 : a + b;\n}}\n',
    "network": "    return socket(2, 1, 0) >= 0 ? 0 : a + b;\n}\n",
    # The verdict's descriptors (nonce 3, verdict 4) never reach the program.
    "verdict_fds": '    char c[16];\n    return (read(3, c, 16) > 0 || write(4, "P", 1) > 0) ? 0 : a + b;\n}\n',
    "fork_bomb": "    int n = 0;\n    for (int i = 0; i < 2000; i++) { int p = fork(); "
    "if (p == 0) { pause(); _exit(0); } if (p < 0) break; n++; }\n"
    "    return n < 2000 ? a + b : 0;\n}\n",
    "memory": "    std::vector<char> v(3ULL << 30, 1);\n    return a + b + v[12345] - 1;\n}\n",
    "output_flood": '    for (;;) fputs("flood flood flood flood flood flood flood\\n", stdout);\n}\n',
    "spin": "    for (;;) {}\n}\n",
    # Compile-time attacks: a header outside the toolchain, a template bomb, a huge binary.
    "include_shadow": '#include "/etc/shadow"\n    return a + b;\n}\n',
    "include_repository": f'#include "{REPOSITORY_FILE}"\n    return a + b;\n}}\n',
    "template_bomb": "    return a + b;\n}\ntemplate<int N> struct F { static const int v = "
    "F<N - 1>::v + F<N - 2>::v; };\nint boom = F<100000>::v;\n",
    "huge_binary": "    return a + b;\n}\nchar boi_huge[200 << 20] = {1};\n",
    # State: the first leaves a file in its scratch; the second passes only if it is gone.
    "state_write": '    FILE *f = fopen("left_behind", "w"); fputs("x", f); fclose(f);\n'
    "    return a + b;\n}\n",
}
CPP_EXPECTED = {
    "right": "passed",
    "wrong": "wrong answer",
    "exit_early": "runtime error",
    "prints_success": "runtime error",
    "syntax": "compile error",
    "crash": "runtime error",
    "read_outside": "passed",
    "write_outside": "passed",
    "network": "passed",
    "verdict_fds": "passed",
    "fork_bomb": "passed",
    "memory": "runtime error",
    "output_flood": "runtime error",
    "spin": "timed out",
    "include_shadow": "compile error",
    "include_repository": "compile error",
    "template_bomb": "compile error",
    "huge_binary": "compile error",
    "state_write": "passed",
}


def test_cpp_statuses_and_hostile_programs(pool) -> None:
    outcomes = judge_all(pool, "cpp", CPP)
    check(outcomes, CPP_EXPECTED)
    assert "Permission denied" in outcomes["include_shadow"]["result"]
    assert "Permission denied" in outcomes["include_repository"]["result"]
    assert not Path(REPOSITORY_FILE + ".w").exists()
    # The next sample on the same workers finds no file of an earlier one.
    later = judge_all(
        pool,
        "cpp",
        {
            f"state_read{i}": '    return fopen("left_behind", "r") ? 0 : a + b;\n}\n'
            for i in range(2)
        },
    )
    assert {outcome["status"] for outcome in later.values()} == {"passed"}


JAVASCRIPT = {
    "right": "  return a + b;\n}\n",
    "wrong": "  return a - b;\n}\n",
    "exit_early": "  process.exit(0);\n}\n",
    "prints_success": "  console.log('passed'); process.exit(0);\n}\n",
    "syntax": "  return a +;\n}\n",
    "throws": "  throw new Error('boom');\n}\n",
    "read_outside": "  try { require('fs').readFileSync("
    f"'{READABLE}'); return 0; }} catch (e) {{ return a + b; }}\n}}\n",
    "write_outside": "  try { require('fs').writeFileSync("
    f"'{REPOSITORY_FILE}.w', 'x'); return 0; }} catch (e) {{ return a + b; }}\n}}\n",
    "child_process": "  try { require('child_process').execSync('cat /etc/passwd'); return 0; }"
    " catch (e) { return a + b; }\n}\n",
    "output_flood": "  const s = 'flood '.repeat(1000); for (;;) process.stdout.write(s);\n}\n",
    "memory": "  const a2 = []; for (;;) a2.push(new Array(1e6).fill(1));\n}\n",
    "spin": "  for (;;) {}\n}\n",
}
JAVASCRIPT_EXPECTED = {
    "right": "passed",
    "wrong": "wrong answer",
    "exit_early": "runtime error",
    "prints_success": "runtime error",
    "syntax": "compile error",
    "throws": "runtime error",
    "read_outside": "passed",
    "write_outside": "passed",
    "child_process": "passed",
    "output_flood": EITHER_LIMIT,
    "memory": EITHER_LIMIT,
    "spin": "timed out",
}


def test_javascript_statuses_and_hostile_programs(pool) -> None:
    outcomes = judge_all(pool, "javascript", JAVASCRIPT)
    check(outcomes, JAVASCRIPT_EXPECTED)
    assert not Path(REPOSITORY_FILE + ".w").exists()


JAVA = {
    "right": "        return a + b;\n    }\n}\n",
    "wrong": "        return a - b;\n    }\n}\n",
    "exit_early": "        System.exit(0); return 0;\n    }\n}\n",
    "syntax": "        return a +;\n    }\n}\n",
    "read_outside": "        try { new java.io.FileInputStream("
    f'"{READABLE}"); return 0; }} catch (Exception e) {{ return a + b; }}\n    }}\n}}\n',
}
JAVA_EXPECTED = {
    "right": "passed",
    "wrong": "wrong answer",
    "exit_early": "runtime error",
    "syntax": "compile error",
    "read_outside": "passed",
}


def test_java_statuses_and_hostile_programs(pool) -> None:
    check(judge_all(pool, "java", JAVA), JAVA_EXPECTED)


GO = {
    "right": "    return a + b\n}\n",
    "wrong": "    return a - b\n}\n",
    "exit_early": "    os.Exit(0)\n    return 0\n}\n",
    # Printed success on the real stdout (the program's os.Stdout is stderr), then exit 0.
    "prints_success": '    os.NewFile(1, "stdout").WriteString("PASS\\nok\\n")\n'
    "    os.Exit(0)\n    return 0\n}\n",
    "panics": '    panic("boom")\n}\n',
    "syntax": "    return a +\n}\n",
    # Passes only where the file cannot be read or written, the socket cannot connect, the
    # child cannot run, and no more than the process cap can be forked.
    "read_outside": f'    if _, err := os.ReadFile("{READABLE}"); err == nil {{\n'
    "        return 0\n    }\n    return a + b\n}\n",
    "write_outside": f'    if os.WriteFile("{REPOSITORY_FILE}.w", []byte("x"), 0o644) == nil {{\n'
    "        return 0\n    }\n    return a + b\n}\n",
    "network": '    if c, err := net.Dial("tcp", "127.0.0.1:22"); err == nil {\n        c.Close()\n'
    "        return 0\n    }\n    return a + b\n}\n",
    "child_process": f'    if out, err := exec.Command("/bin/cat", "{READABLE}").Output(); '
    "err == nil && len(out) > 0 {\n        return 0\n    }\n    return a + b\n}\n",
    "fork_bomb": "    n := 0\n    for i := 0; i < 2000; i++ {\n"
    "        pid, _, errno := syscall.RawSyscall(syscall.SYS_FORK, 0, 0, 0)\n"
    "        if errno != 0 {\n            break\n        }\n"
    "        if pid == 0 {\n            syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)\n"
    "        }\n        n++\n    }\n    if n < 2000 {\n        return a + b\n    }\n"
    "    return 0\n}\n",
    # The verdict's descriptors (nonce 3, verdict 4) never reach the program.
    "verdict_fds": "    buffer := make([]byte, 16)\n"
    "    if n, _ := syscall.Read(3, buffer); n > 0 {\n        return 0\n    }\n"
    '    if n, _ := syscall.Write(4, []byte("P")); n > 0 {\n        return 0\n    }\n'
    "    return a + b\n}\n",
    "memory": "    s := make([]byte, 3<<30)\n    for i := range s {\n        s[i] = 1\n    }\n"
    "    return a + b + int(s[12345]) - 1\n}\n",
    "output_flood": '    out := os.NewFile(1, "stdout")\n    for {\n'
    '        fmt.Fprintln(out, "flood flood flood flood flood flood")\n    }\n}\n',
    "spin": "    for {\n    }\n}\n",
    # Compile-time attacks: a file embedded at build time, C through cgo, a huge binary.
    "embed": f"    return a + b\n}}\n\n//go:embed {READABLE}\nvar boiEmbedded string\n",
    "cgo": "    return int(C.abs(C.int(a))) + b\n}\n",
    # 200 MB of static data (both ends set, so not a zeroed section): past the file size cap.
    "huge_binary": "    return a + b\n}\n\nvar boiHuge = [200 << 20]byte{1, 200<<20 - 1: 2}\n",
    "state_write": '    if os.WriteFile("left_behind", []byte("x"), 0o644) != nil {\n'
    "        return 0\n    }\n    return a + b\n}\n",
}
# The prompt of a sample that tries cgo (a C preamble and `import "C"`).
CGO = {"cgo": '// #include <stdlib.h>\nimport "C"\n\n'}
GO_EXPECTED = {
    "right": "passed",
    "wrong": "wrong answer",
    "exit_early": "runtime error",
    "prints_success": "runtime error",
    "panics": "runtime error",
    "syntax": "compile error",
    "read_outside": "passed",
    "write_outside": "passed",
    "network": "passed",
    "child_process": "passed",
    "fork_bomb": "passed",
    "verdict_fds": "passed",
    "memory": "runtime error",
    # Go's runtime ignores SIGXFSZ: the writes past the file size cap fail, and the loop runs
    # on until its time is up.
    "output_flood": "timed out",
    "spin": "timed out",
    "embed": "compile error",
    "cgo": "compile error",
    "huge_binary": "compile error",
    "state_write": "passed",
}


def test_go_statuses_and_hostile_programs(pool) -> None:
    outcomes = judge_all(pool, "go", GO)
    check(outcomes, GO_EXPECTED)
    assert not Path(REPOSITORY_FILE + ".w").exists()
    assert "Not equal" in outcomes["wrong"]["result"]  # testify's message, for people
    # Each refused for its own reason (the compiler's messages, which Go writes to stdout).
    assert "build system did not supply embed configuration" in outcomes["embed"]["result"]
    assert "could not import C" in outcomes["cgo"]["result"]
    assert "file too large" in outcomes["huge_binary"]["result"]
    assert "out of memory" in outcomes["memory"]["result"]
    later = judge_all(
        pool,
        "go",
        {
            f"state_read{i}": '    if _, err := os.ReadFile("left_behind"); err == nil {\n'
            "        return 0\n    }\n    return a + b\n}\n"
            for i in range(2)
        },
    )
    assert {outcome["status"] for outcome in later.values()} == {"passed"}


def test_execute_samples_dispatches_on_the_language(tmp_path) -> None:
    """`execute_samples` judges a C++ problem by building it, and counts its statuses apart."""
    if not _available("cpp"):
        pytest.skip("no g++ here")
    samples = [
        {"task_id": "t/cpp", "completion": CPP["right"]},
        {"task_id": "t/cpp", "completion": CPP["wrong"]},
        {"task_id": "t/cpp", "completion": CPP["syntax"]},
    ]
    config = ExecutionConfig(workers=1, calibrate=False, reference_timing=False)
    report = execute_samples([problem("cpp")], samples, config, tmp_path / "results.jsonl")
    assert [row["status"] for row in report.results] == ["passed", "wrong answer", "compile error"]
    counts = report.summary["counts"]
    assert (counts["passed"], counts["wrong_answers"], counts["compile_errors"]) == (1, 1, 1)
    assert report.summary["limits"]["language_timeouts"]["cpp"]["compile"] > 0


def test_a_read_path_the_sandbox_uid_cannot_reach_is_one_sentence(tmp_path) -> None:
    """A toolchain's folder under a directory closed to other users (boi's cache under a
    0700 /root) is refused in one sentence where no mount namespace can expose it."""
    closed = tmp_path / "closed"
    (closed / "layer").mkdir(parents=True)
    closed.chmod(0o700)
    pool = SimpleNamespace(read_paths={"go": (str(closed / "layer"),)})
    with pytest.raises(UserError, match=r"Go programs .* closed to other users.*BOI_CACHE_DIR"):
        WorkerPool._check_reachable(pool, {"filesystem": False, "uid_drop": True})  # type: ignore[arg-type]
    # Exposed by the worker's mounts, or read under the harness's own uid: nothing to refuse.
    WorkerPool._check_reachable(pool, {"filesystem": True, "uid_drop": True})  # type: ignore[arg-type]
    WorkerPool._check_reachable(pool, {"filesystem": False, "uid_drop": False})  # type: ignore[arg-type]


def go_problem(prompt: str, test: str, setup: str | None = None) -> Problem:
    metadata = {"language": "go", **({"test_setup": setup} if setup else {})}
    return Problem("Go/t", "test", prompt, "F", test, metadata=metadata)


GO_TEST = "func TestF(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(1, F())\n}\n"


def test_go_program_imports_what_its_code_names() -> None:
    """The program imports each package of the prompt's and the tests' declarations, or of
    CodeGeeX's helper list, that its code (not a comment or a string) names, and no other:
    Go refuses an unused import. The prompt's own import block is not repeated."""
    prompt = (
        'import (\n    "math"\n    "strings"\n)\n\n// F uses sort.Ints, math.Abs.\nfunc F() int {\n'
    )
    completion = (
        '    s := strings.Repeat("fmt.", 2)\n    if unicode.IsUpper(rune(s[0])) {\n'
        "        return 0\n    }\n    return len(s) - 8 + int(bytes.Count(nil, nil))\n}\n"
    )
    build = go.TOOLCHAIN.assemble(go_problem(prompt, GO_TEST), completion, "boi-end")
    main = build.files["main.go"]
    header = main.split("\n)\n", 1)[0]
    imported = sorted(line.strip() for line in header.splitlines()[3:])
    assert imported == sorted(
        ['"strings"', '"bytes"', '"unicode"', '"testing"', '"github.com/stretchr/testify/assert"']
    )
    assert main.count("import") == 1 and "// F uses sort.Ints, math.Abs." in main
    # The runner: every test wrapped and counted, then the marker, " wrong" unless all held.
    runner = build.files["boi_main.go"]
    assert "TestF(t); if !t.Failed() { held++ }" in runner
    assert "if held == 1 {" in runner and '"\\nboi-end wrong\\n"' in runner
    assert [step[0].rpartition("/")[2] for step in build.compile] == ["compile", "link"]


def test_go_problem_without_a_test_function_is_unusable() -> None:
    defect = problem_defect(go_problem("func F() int {\n", "func F2() {}\n"))
    assert defect == "its Go test defines no func TestX(t *testing.T)"


def test_boi_execute_says_go_needs_its_vendored_testify(tmp_path, monkeypatch) -> None:
    """With `go` here but neither a compiled layer in the cache nor the fetched tarball, the
    line of languages judged here says what to fetch instead of listing Go."""
    if go.TOOLCHAIN.missing():
        pytest.skip("no go here")
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)  # no data/humaneval-x here
    line = judged_languages()
    assert "Go (needs HumanEval-X's vendored testify" in line, line
    assert "boi data fetch humaneval-x" in line
    with pytest.raises(UserError, match="boi data fetch humaneval-x"):
        WorkerPool(ExecutionConfig(workers=1), languages=["go"])


def test_humaneval_x_go_judged_by_execute_samples(tmp_path, monkeypatch) -> None:
    """Real HumanEval-X Go problems through `execute_samples`: a prompt that imports `math`
    (Go/0), one whose helper uses it (Go/32), one whose tests import `crypto/md5` beside the
    prompt's own (Go/162), each canonical solution passing; a wrong answer is one."""
    monkeypatch.setenv("BOI_CACHE_DIR", go_cache())
    if not (SHARED_DATA / "humaneval-x" / "humaneval_go.jsonl.gz").is_file():
        pytest.skip("HumanEval-X is not in ../shared/data")
    if not _available("go"):
        pytest.skip("no go here")
    problems = {
        p.task_id: p
        for p in load_humaneval_x("go", SHARED_DATA / "humaneval-x").problems
        if p.task_id in ("Go/0", "Go/32", "Go/162")
    }
    samples = [
        *({"task_id": t, "completion": p.canonical_solution} for t, p in problems.items()),
        {"task_id": "Go/0", "completion": "    return false\n}\n"},
    ]
    config = ExecutionConfig(workers=2, calibrate=False, reference_timing=False)
    report = execute_samples(problems, samples, config, tmp_path / "results.jsonl")
    statuses = [row["status"] for row in report.results]
    assert statuses == ["passed"] * 3 + ["wrong answer"], [r["result"] for r in report.results]
    assert report.summary["limits"]["language_timeouts"]["go"]["compile"] > 0


def test_go_vendor_not_the_pinned_one_is_one_sentence(tmp_path, monkeypatch) -> None:
    """The vendored testify is compiled only when it is the checksummed upstream file: a
    changed or missing one is one sentence naming it, and nothing is built."""
    if go.TOOLCHAIN.missing() or not (GO_VENDOR / "vendor.tar.gz").is_file():
        pytest.skip("no go or no HumanEval-X here")
    monkeypatch.setenv("BOI_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "go-evaluation"
    folder.mkdir()
    (folder / "go.mod").write_bytes((GO_VENDOR / "go.mod").read_bytes())
    with pytest.raises(UserError, match=r"vendor\.tar\.gz does not exist; run `boi data fetch"):
        go.build_layer(folder)
    (folder / "vendor.tar.gz").write_bytes(b"\x1f\x8b not the pinned tarball")
    with pytest.raises(UserError, match=r"vendor\.tar\.gz is not HumanEval-X's pinned"):
        go.build_layer(folder)
    assert not any((tmp_path / "cache" / "go-layer").iterdir())
