"""The unprivileged tier (Landlock + seccomp + uid, no namespaces) beside the namespaced one:
the same verdicts, limits that stop a sample and leave the pool serving, and a scratch space
that a hostile sample cannot break the worker with."""

from __future__ import annotations

import json
import re
import shutil
import site
import subprocess
import tempfile
from pathlib import Path

import pytest

from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem
from tests.sandbox_helpers import ADD, EXPECTED_LEVEL, GOOD, TIERS, virtualenv

REPO = Path(__file__).resolve().parents[1]

TIMEOUT = 2.0


@pytest.fixture(scope="module", params=sorted(TIERS))
def pool(request):
    config = ExecutionConfig(
        workers=1,
        timeout=TIMEOUT,
        processes=16,
        scratch_mb=8,
        scratch_inodes=256,
        **TIERS[request.param],
    )
    with WorkerPool(config) as pool:
        yield pool


def judge(pool: WorkerPool, completion: str, separate: bool = True) -> dict:
    job = _job(ADD, completion, TIMEOUT, separate=separate)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    return outcome


def test_each_tier_is_reached_and_passes_correct_code(pool):
    assert pool.isolation.level in ("full", "unprivileged"), pool.isolation.describe()
    if not pool.isolation.pid_namespace:
        assert pool.isolation.level == "unprivileged"
        assert pool.isolation.landlock >= 1 and pool.isolation.seccomp
    for separate in (True, False):
        assert judge(pool, GOOD, separate)["status"] == "passed"


FILL_SCRATCH = """    import os
    for i in range(100000):
        with open(f"f{i}", "wb") as handle:
            handle.write(b"x" * 1_000_000)
    return a + b
"""
MANY_FILES = """    import os
    for i in range(100000):
        open(f"f{i}", "w").close()
    return a + b
"""
FORK_TO_THE_LIMIT = """    import os, time
    children = 0
    while True:
        try:
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            children += 1
        except OSError:
            break
    time.sleep(60)
"""
SLEEP = "    import time\n    time.sleep(60)\n"
DEEP_TREE = """    import os
    for _ in range(1500):
        os.mkdir("d")
        os.chdir("d")
    open("leaf", "w").close()
    return a - b
"""


@pytest.mark.parametrize(
    ("name", "completion", "expected"),
    [
        ("fills its scratch space", FILL_SCRATCH, r"failed|timed out"),
        ("makes too many files", MANY_FILES, r"failed|timed out"),
        ("forks to the limit", FORK_TO_THE_LIMIT, r"failed|timed out"),
        ("sleeps past the timeout", SLEEP, r"timed out"),
        ("leaves a 1500-deep directory chain", DEEP_TREE, r"failed"),
    ],
)
def test_a_sample_over_a_limit_is_stopped_and_the_pool_goes_on(pool, name, completion, expected):
    for separate in (True, False):
        outcome = judge(pool, completion, separate)
        assert re.match(expected, outcome["status"]), (name, outcome)
        assert outcome["status"] != "error", (name, outcome)
        # The worker survived, its scratch is clean, and the next sample passes.
        assert judge(pool, GOOD, separate)["status"] == "passed", name


# The tests' side of separated judging runs in one long-lived process per worker. A run's
# verdict must not depend on the runs before it, and a run that ends without a verdict must
# not leave a broken process to the next one.
def judge_problem(pool: WorkerPool, problem: Problem, completion: str) -> dict:
    job = _job(problem, completion, TIMEOUT, separate=True)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    return outcome


def problem_with_tests(test: str) -> Problem:
    return Problem(
        task_id="t/tests",
        benchmark="test",
        prompt="import os, random, sys\n\n\ndef add(a, b):\n",
        entry_point="add",
        test=test,
    )


def pid_of_tests_process(pool: WorkerPool) -> str:
    """The tests process's pid, as the reason of a run that fails on purpose."""
    outcome = judge_problem(
        pool,
        problem_with_tests("def check(candidate):\n    assert False, os.getpid()\n"),
        GOOD,
    )
    return outcome["result"]


SPOIL = """def check(candidate):
    random.seed(1)
    sys.setrecursionlimit(123)
    open("left-behind", "w").close()
    assert candidate(2, 3) == 5
"""
UNSPOILT = """def check(candidate):
    assert random.random() != random.Random(1).random(), "random was seeded by an earlier run"
    assert sys.getrecursionlimit() != 123, "an earlier run's recursion limit"
    assert not os.path.exists("left-behind"), "an earlier run's file"
    assert os.listdir(".") == [], os.listdir(".")
    assert candidate(2, 3) == 5
"""


def test_the_tests_process_serves_run_after_run_from_a_clean_state(pool):
    first = pid_of_tests_process(pool)
    assert first.startswith("failed: AssertionError: ")
    assert judge_problem(pool, problem_with_tests(SPOIL), GOOD)["status"] == "passed"
    outcome = judge_problem(pool, problem_with_tests(UNSPOILT), GOOD)
    assert outcome["status"] == "passed", outcome
    assert pid_of_tests_process(pool) == first  # one process for all of these runs


TESTS_THAT_HANG = "def check(candidate):\n    while candidate(2, 3) == 5:\n        pass\n"


@pytest.mark.parametrize(
    ("name", "problem", "completion"),
    [
        ("the candidate sleeps past the timeout", ADD, SLEEP),
        ("the tests loop forever", problem_with_tests(TESTS_THAT_HANG), GOOD),
    ],
)
def test_a_run_without_a_verdict_retires_the_tests_process(pool, name, problem, completion):
    before = pid_of_tests_process(pool)
    assert judge_problem(pool, problem, completion)["status"] == "timed out", name
    assert pid_of_tests_process(pool) != before, name  # a new tests process
    assert judge(pool, GOOD)["status"] == "passed", name


# A sample's view of /tmp when the harness's own Python lives there (a virtualenv made with
# `python -m venv /tmp/...`): run by that Python, in a child process.
_TMP_VIEW = """
import json, os, sys
from benchmarks.execution import ExecutionConfig, execute_samples
from benchmarks.problem import Problem

marker, out = sys.argv[1], sys.argv[2]
problem = Problem(
    task_id="t/tmp", benchmark="test", prompt="def seen():\\n", entry_point="seen",
    test="def check(candidate):\\n    assert candidate() == []\\n",
)
completion = (
    "    import os\\n"
    f"    return [p for p in {[marker, os.path.dirname(marker)]!r} if os.path.exists(p)]\\n"
)
samples = [{"task_id": "t/tmp", "completion": completion}]
for separate in (True, False):
    path = f"{out}-{separate}.jsonl"
    execute_samples([problem], samples, ExecutionConfig(workers=1, separate_candidate=separate), path)
    print(json.dumps([json.loads(line)["result"] for line in open(path)]))
"""


@pytest.mark.slow  # makes a virtualenv
def test_tmp_is_hidden_even_when_the_virtualenv_lives_there(tmp_path):
    """A virtualenv under /tmp stays importable, and the rest of /tmp is hidden all the same:
    a sample cannot see a file the harness's user left there (nor its directory)."""
    if EXPECTED_LEVEL != "full":
        pytest.skip("no mount namespace in this tier: /tmp is not hidden (docs: sandbox.md)")
    if not str(tmp_path.resolve()).startswith("/tmp/"):
        pytest.skip("pytest's temporary directory is not under /tmp here")
    venv, packages = virtualenv(tmp_path / "venv")
    (packages / "boi-test.pth").write_text(f"{site.getsitepackages()[0]}\n{REPO}\n")
    # Readable by anyone (as a user's files in /tmp often are): only the mount can hide it.
    left = Path(tempfile.mkdtemp(prefix="boi-test-left-", dir="/tmp"))
    try:
        left.chmod(0o755)
        marker = left / "left-by-the-user.txt"
        marker.write_text("private\n")
        marker.chmod(0o644)
        done = subprocess.run(
            [str(venv), "-c", _TMP_VIEW, str(marker), str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(left)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ['["passed"]', '["passed"]'], done.stdout + done.stderr[-2000:]


def test_the_tests_import_what_the_harness_has_and_the_candidate_cannot(pool):
    """Where the worker hides the site directories from samples under empty mounts (so that
    Landlock can grant whole trees), the tests process gets them back: tests may import the
    harness's packages (here pytest), a candidate still may not."""
    problem = Problem(
        task_id="t/site",
        benchmark="test",
        prompt="def imported():\n",
        entry_point="imported",
        test="def check(candidate):\n    import pytest\n    assert candidate() == 'no'\n",
    )
    completion = (
        "    try:\n"
        "        import pytest\n"
        "    except ImportError:\n"
        "        return 'no'\n"
        "    return 'yes'\n"
    )
    job = _job(problem, completion, TIMEOUT)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    assert outcome["status"] == "passed", outcome


_INSTALLED_RUN = """
import json, sys
import benchmarks
from benchmarks.execution import ExecutionConfig, WorkerPool, execute_samples
from benchmarks.problem import Problem

assert "site-packages" in benchmarks.__file__, benchmarks.__file__
problem = Problem(
    task_id="t/add", benchmark="test", prompt="def add(a, b):\\n", entry_point="add",
    test="def check(candidate):\\n    assert candidate(2, 3) == 5\\n",
)
with WorkerPool(ExecutionConfig(workers=1)) as pool:
    isolation = pool.isolation
print(json.dumps({"seccomp": isolation.seccomp, "landlock": isolation.landlock,
                  "level": isolation.level}))
execute_samples([problem], [{"task_id": "t/add", "completion": "    return a + b\\n"}],
                ExecutionConfig(workers=1), sys.argv[1])
print(json.dumps([json.loads(line)["result"] for line in open(sys.argv[1])]))
"""


def test_an_installed_boi_keeps_every_layer(tmp_path):
    """boi installed into a site directory (not editable), whose own files the worker hides
    from samples: the worker loads every module of its own before hiding the site
    directories, so no layer is lost (seccomp was: its module is loaded after Landlock's)."""
    if EXPECTED_LEVEL != "full":
        pytest.skip("no mounts in this tier: the site directories are not hidden by mounts")
    venv, packages = virtualenv(tmp_path / "venv")
    # The package itself copied in, as `pip install` puts it; its dependencies from ours.
    shutil.copytree(REPO / "benchmarks", packages / "benchmarks")
    (packages / "boi-test.pth").write_text(f"{site.getsitepackages()[0]}\n")
    done = subprocess.run(
        [str(venv), "-c", _INSTALLED_RUN, str(tmp_path / "out.jsonl")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    facts, results = (json.loads(line) for line in done.stdout.split("\n")[:2])
    assert facts["seccomp"] and facts["landlock"] and facts["level"] == "full", facts
    assert results == ["passed"], done.stdout
