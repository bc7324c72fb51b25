"""Programs of other languages than Python judged in the sandbox (job mode "build", issue 46):
the statuses, the end marker that a pass needs, and hostile programs per language (files
outside scratch, network, processes, memory, output, time, compile-time attacks, state for the
next sample, the verdict's descriptors), as root and in the container-like run.

One pool for the module (every worker proves each toolchain once), and each language's samples
go to it as one batch, so the compiles run on every worker at once. A toolchain this machine
lacks skips its tests, except where BOI_REQUIRE_TOOLCHAINS=1 (`.ci/run`) says it must be there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchmarks.execution import ExecutionConfig, WorkerPool, execute_samples
from benchmarks.execution._pool import build_job
from benchmarks.execution._run import _harness_deadline
from benchmarks.languages import language_named
from benchmarks.problem import Problem
from tests.sandbox_helpers import EXPECTED_LEVEL

LANGUAGES = ("cpp", "javascript", "java")
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
    return not missing


@pytest.fixture(scope="module")
def pool():
    languages = [language for language in LANGUAGES if _available(language)]
    if not languages:
        pytest.skip("no toolchain of another language here")
    config = ExecutionConfig(workers=2, memory_mb=2048, processes=64, timeout=RUN_TIMEOUT)
    with WorkerPool(config, languages=languages) as pool:
        assert pool.isolation.level == EXPECTED_LEVEL
        yield pool


# What the hostile C++ samples call beyond the headers every C++ program gets (fork, read,
# socket).
PRELUDES = {"cpp": "#include<unistd.h>\n#include<sys/socket.h>\n"}


def problem(language: str) -> Problem:
    """The toolchain's own known-good problem (`add(2, 3) == 5`)."""
    toolchain = language_named(language).toolchain
    assert toolchain is not None
    prompt, _, test = toolchain.probe
    prompt = PRELUDES.get(language, "") + prompt
    return Problem(
        task_id=f"t/{language}",
        benchmark="test",
        prompt=prompt,
        entry_point="add",
        test=test,
        metadata={"language": language},
    )


def judge_all(pool: WorkerPool, language: str, completions: dict[str, str]) -> dict[str, dict]:
    if language not in pool.languages:
        pytest.skip(f"no {language} toolchain here")
    names = list(completions)
    jobs = []
    for index, name in enumerate(names):
        job = build_job(problem(language), completions[name], RUN_TIMEOUT, COMPILE_TIMEOUT)
        jobs.append((index, {**job, "id": index}, _harness_deadline(job)))
    return {names[index]: outcome for index, outcome in pool.map(jobs)}


def check(outcomes: dict[str, dict], expected: dict[str, str]) -> None:
    got = {name: outcomes[name]["status"] for name in expected}
    assert got == expected, {name: outcomes[name]["result"][:300] for name in expected}


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
    "output_flood": "runtime error",
    "memory": "runtime error",
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
