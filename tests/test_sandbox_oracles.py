"""Verdicts that teach a candidate nothing (issue 33): attacks that learn answers from the
order of their calls, or carry what they learnt to a later sample of the same task.

Two defences are checked, each by the attack it stops:

- every assert runs to the end (`_tests_side._compile_every_assert`, HumanEval+'s
  `_plus_check_all`, stdin/stdout tests past a wrong answer), so whether a candidate's next call
  comes does not depend on whether its last answer held;
- no state one sample can write and a later one read: where the worker can, each sample gets
  a PID and a mount namespace of its own (pid 1, a fresh scratch tmpfs at the
  same path every run), and the seccomp filter refuses page-cache probes and evictions
  (tests/test_sandbox_seccomp.py checks the syscalls one by one).

What no tier closes (the time a file read or a path lookup takes, the pipe inode counter) is
named in `Isolation.open_channels()`, printed when a pool starts; the last test checks it is
said.
A third (issue 49): what the trusted side does with the calls does not depend on the answers
either. A failed assert is kept as bounded text, the replies of a run add up to a budget,
every reply owed is read however the tests end, and nothing one run allocates survives into
the next: a correctness-dependent memory probe, a sabotage of a later sample and a probe of
the violation path check it (the tests process reports its own memory: trusted code may).

Run as root and in the container-like run (`make test-container`).
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import site
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem, StdioTest
from tests.sandbox_helpers import EXPECTED_LEVEL, TIERS, virtualenv

REPO = Path(__file__).resolve().parents[1]

TIMEOUT = 1.0


@pytest.fixture(scope="module", params=list(TIERS))
def pool(request):
    config = ExecutionConfig(
        workers=1, memory_mb=512, processes=32, timeout=TIMEOUT, **TIERS[request.param]
    )
    with WorkerPool(config) as started:
        yield started


def _problem(name: str, test: str, prompt: str = "def f(x):\n") -> Problem:
    return Problem(task_id=f"t/{name}", benchmark="test", prompt=prompt, entry_point="f", test=test)


def judge(pool: WorkerPool, completion: str, problem: Problem, timeout: float = TIMEOUT) -> dict:
    job = _job(problem, completion, timeout)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    return outcome


def body(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.strip("\n").splitlines())


THREE_ASSERTS = _problem(
    "three",
    "def check(candidate):\n"
    "    assert candidate(0) == 10, 'first'\n"
    "    assert candidate(1) == 11, 'second'\n"
    "    assert candidate(2) == 12, 'third'\n",
)


# ---- the calls do not depend on the answers ------------------------------------------------


def test_calls_continue_after_a_wrong_answer(pool):
    """A wrong first answer no longer ends the calls: the third one still comes (and hangs,
    so the run times out instead of failing at the first assert)."""
    completion = body("if x == 2:\n    while True:\n        pass\nreturn 0")
    outcome = judge(pool, completion, THREE_ASSERTS)
    assert outcome["status"] == "timed out", outcome


def test_the_verdict_is_the_first_failure(pool):
    """Running on changes no verdict: the reason is the first failed assert's, even when a
    later call raises."""
    completion = body("if x == 2:\n    raise ValueError('late')\nreturn 10 + x if x == 0 else -1")
    outcome = judge(pool, completion, THREE_ASSERTS)
    assert outcome["status"] == "failed", outcome
    assert outcome["result"] == "failed: AssertionError: second", outcome
    honest = judge(pool, body("return 10 + x"), THREE_ASSERTS)
    assert honest["status"] == "passed", honest


def test_a_tests_helper_that_asserts_runs_on_too(pool):
    """Asserts inside the tests' own helpers are run to the end as well."""
    problem = _problem(
        "helper",
        "def same(a, b):\n    assert a == b, f'{a} != {b}'\n\n"
        "def check(candidate):\n    same(candidate(0), 1)\n    same(candidate(1), 2)\n",
    )
    outcome = judge(pool, body("if x == 1:\n    while True:\n        pass\nreturn 0"), problem)
    assert outcome["status"] == "timed out", outcome


def test_humanevalplus_calls_every_input():
    """HumanEval+'s comparison loop calls every input, then raises the first failure."""
    from benchmarks.loaders import _plus_check
    from benchmarks.loaders.humanevalplus import pack_data

    inputs = [[1], [2], [3]]
    data = pack_data(inputs, [{"literal": repr(v)} for v in (2, 3, 4)])
    calls: list[int] = []

    def candidate(x: int) -> int:
        calls.append(x)
        return 0 if x == 1 else x + 1

    with pytest.raises(AssertionError, match=r"base input 1 of 3.*returned 0, expected 2"):
        _plus_check._plus_check_all(candidate, data, atol=0.0, base=3)
    assert calls == [1, 2, 3]


def test_stdio_tests_run_on_after_a_wrong_answer(pool):
    """A contest program's later tests still run after a wrong answer (the third hangs, so the
    slowest test takes the whole timeout), and the verdict is the first wrong answer."""
    problem = Problem(
        task_id="t/echo",
        benchmark="code_contests",
        prompt='"""Echo the number."""\n',
        entry_point=None,
        stdio_tests=(StdioTest("1\n", "1\n"), StdioTest("2\n", "2\n"), StdioTest("3\n", "3\n")),
    )
    program = "n = input()\nif n == '3':\n    while True:\n        pass\nprint(0)\n"
    job = _job(problem, program, TIMEOUT)
    started = time.monotonic()
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    assert outcome["status"] == "failed", outcome
    assert outcome["result"] == "failed: wrong answer on test 0", outcome
    assert outcome["run_seconds"] >= TIMEOUT * 0.8 and time.monotonic() - started >= TIMEOUT


# ---- nothing a sample writes reaches a later one --------------------------------------------

PROBE = _problem("probe", "def check(candidate):\n    assert candidate(0) is None, candidate(0)\n")
# What a sample can count: its pid and a child's, the inode of a file it creates in its scratch
# space and of the scratch directory itself, the scratch directory's name.
COUNTERS = body(
    """
import os
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
with open('mark', 'w') as handle:
    handle.write('x')
return (os.getpid(), pid, os.stat('mark').st_ino, os.stat('.').st_ino, os.getcwd())
"""
)
# A sample that bumps every counter above, as a relay or an oracle chain would.
BUMPS = body(
    """
import os
for n in range(40):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
for n in range(60):
    open(f'f{n}', 'w').close()
return None
"""
)


def test_every_sample_starts_from_the_same_counters(pool):
    if not pool.isolation.sample_namespaces:
        pytest.skip("no namespaces per sample here: the PID counter is a named open channel")
    first = judge(pool, COUNTERS, PROBE)
    assert judge(pool, BUMPS, PROBE)["status"] == "passed"
    second = judge(pool, COUNTERS, PROBE)
    assert first["result"] == second["result"], (first, second)
    # pid 1 of its own namespace (the message is the second call: its child is pid 3).
    assert first["result"].startswith("failed: AssertionError: (1, 3, "), first


def test_a_later_invocation_starts_from_the_same_counters(pool):
    """Across invocations too: a sample in a new pool (a later `boi` run) reads the counters a
    sample of this pool would, after one here bumped them all."""
    if not pool.isolation.sample_namespaces:
        pytest.skip("no namespaces per sample here: the PID counter is a named open channel")
    first = judge(pool, COUNTERS, PROBE)
    assert judge(pool, BUMPS, PROBE)["status"] == "passed"
    with WorkerPool(pool.config) as later:
        second = judge(later, COUNTERS, PROBE)
    assert first["result"] == second["result"], (first, second)


# Two invocations (two pools) of a harness whose Python lives under /tmp (a fresh clone there,
# its virtualenv made with `python -m venv`): run by that Python, in a child process.
_TWO_INVOCATIONS = """
import json, sys
from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem

probe, counters, bumps = json.loads(sys.argv[1])
problem = Problem(task_id="t/probe", benchmark="test", prompt="def f(x):\\n", entry_point="f",
                  test=probe)

def judge(pool, completion):
    job = _job(problem, completion, 2.0)
    return list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))[0][1]["result"]

seen = []
for bump in (True, False):
    with WorkerPool(ExecutionConfig(workers=1, processes=32)) as pool:
        seen.append(pool.isolation.sample_namespaces)
        seen.append(judge(pool, counters))
        if bump:
            judge(pool, bumps)
print(json.dumps(seen))
"""


@pytest.mark.slow  # makes a virtualenv
def test_a_later_invocation_sees_the_same_counters_with_the_virtualenv_under_tmp():
    """Where the virtualenv lives under /tmp the worker cannot mount its scratch space there:
    it used the harness's temporary directory (`boi-sandbox-<pid>-<random>`), a new name in
    every invocation, which a sample reads in its working directory (the fresh-clone failure
    of the test above). It now takes the next fixed place (/var/tmp, ...)."""
    if EXPECTED_LEVEL != "full":
        pytest.skip("no mount namespace in this tier: samples get random scratch names")
    where = Path(tempfile.mkdtemp(prefix="boi-test-clone-", dir="/tmp"))
    try:
        venv, packages = virtualenv(where / "venv")
        (packages / "boi-test.pth").write_text(f"{site.getsitepackages()[0]}\n{REPO}\n")
        done = subprocess.run(
            [str(venv), "-c", _TWO_INVOCATIONS, json.dumps([PROBE.test, COUNTERS, BUMPS])],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(where)
    assert done.returncode == 0, done.stderr[-2000:]
    namespaces, first, _, second = json.loads(done.stdout)
    assert namespaces, "no namespaces per sample in this tier"
    assert first == second, (first, second)
    assert "boi-sandbox-" not in first, first


def test_scratch_names_reveal_no_run_count(pool):
    """Where samples share the worker's scratch space, its directory names are random."""
    names = {judge(pool, body("import os\nreturn os.getcwd()"), PROBE)["result"] for _ in range(3)}
    if pool.isolation.sample_namespaces:
        assert len(names) == 1, names  # the same mount point, a fresh tmpfs each time
    else:
        assert len(names) == 3, names
        # 12 random hex digits, not a counter (`c1`, `c2`, ...): a random name may itself end
        # in "c1", which an endswith check took for a count (a flaky failure, 1 run in ~30).
        basenames = {name.rstrip("'").rsplit("/", 1)[-1] for name in names}
        assert all(re.fullmatch(r"c[0-9a-f]{12}", b) for b in basenames), names


SECRET = 41
RELAY = _problem(
    "relay", f"def check(candidate):\n    assert candidate(7) == {SECRET}\n", "def f(x):\n"
)
# The honest sample computes the answer and publishes it in the low bits of the PID counter
# (forking until its last child's pid is SECRET mod 64); the relay computes nothing and reads
# it back from its own child's pid (the spawner's fork of the relay and the relay's own fork
# come between).
PUBLISH = body(
    f"""
import os
while True:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    if pid % 64 == {SECRET}:
        break
return {SECRET}
"""
)
REPLAY = body(
    """
import os
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
return (pid - 2) % 64
"""
)


def test_a_relay_through_the_pid_counter_fails(pool):
    if not pool.isolation.sample_namespaces:
        pytest.skip("no namespaces per sample here: the PID counter is a named open channel")
    assert judge(pool, PUBLISH, RELAY)["status"] == "passed"
    outcome = judge(pool, REPLAY, RELAY)
    assert outcome["status"] == "failed", outcome


BOOLEAN = _problem(
    "boolean",
    "def check(candidate):\n"
    + "".join(
        f"    assert candidate({i}) is {answer}\n" for i, answer in enumerate([True, False, True])
    )
    + "",
)
# The oracle chain of the issue: identical copies that never read their inputs. Each notes
# "tried answer True at call L" before replying and "held" when call L+1 comes, in the PID
# counter (6 bits: the known prefix length, its answers, a tried bit), so that a later copy
# starts from what earlier ones learnt. Against a harness that stops at the first failed assert
# and keeps the PID counter, copies 3 to 6 pass.
CHAIN = body(
    """
import os
def child_pid():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid
def publish(value):
    while child_pid() % 64 != value:
        pass
global _state
try:
    _state
except NameError:
    raw = (child_pid() - 2) % 64
    _state = [raw & 3, (raw >> 2) & 7, (raw >> 5) & 1]
known, bits, tried = _state
if x < known:
    return bool(bits >> x & 1)
if x == known:
    answer = not tried  # True first; False where True was tried and no next call came
    publish(known | (bits << 2) | (1 << 5))
    _state = [known, bits | (answer << x), 1]
    return answer
_state = [x, _state[1], 0]
publish(x | (_state[1] << 2))
return True
"""
)


def test_an_oracle_chain_of_identical_copies_never_passes(pool):
    """In a trial with the tests stopping at their first failed assert and the PID counter
    open, 3 copies of 8 passed. Where the counter is open (no namespaces per sample), a copy
    starts from whatever the counter holds and can pass by luck (about 1 in 30), so the chain
    is run only where each sample's counter starts at 1."""
    if not pool.isolation.sample_namespaces:
        pytest.skip("no namespaces per sample here: the PID counter is a named open channel")
    outcomes = [judge(pool, CHAIN, BOOLEAN)["status"] for _ in range(8)]
    assert "passed" not in outcomes, outcomes


def test_a_reply_too_costly_to_decode_fails_fast(pool):
    """A reply of a quarter million one-element lists (over the bound of 200,000; a million,
    9 MB, kept the tests' side decoding for seconds past the deadline) fails at once, with
    the reason, instead of timing out."""
    # One call: with a second one planned (PROBE's message), the tests would still read and
    # drop its reply after the violation, as at any end, and the candidate takes as long again
    # to build it.
    one_call = _problem("decode", "def check(candidate):\n    assert candidate(0) is None\n")
    # Five seconds: building and encoding the reply takes the candidate itself over one on
    # a loaded two-core machine (it timed out there, before and after issue 49).
    outcome = judge(pool, body("return [[i] for i in range(250_000)]"), one_call, 5.0)
    assert outcome["status"] == "failed", outcome
    if pool.config.separate_candidate:
        assert "lists and objects" in outcome["result"], outcome


def test_the_pool_names_what_stays_open(pool, capfd):
    channels = pool.isolation.open_channels()
    assert any("looking up a path" in c for c in channels), channels
    assert any("pipe and socket inode" in c for c in channels), channels
    assert ("PID counter" in "; ".join(channels)) is not pool.isolation.sample_namespaces
    with WorkerPool(pool.config):
        pass
    assert "sandbox: open between samples here: " in capfd.readouterr().err


# ---- the trusted side does the same work whatever the answers (issue 49) --------------------

# The tests process's own view of what it holds as a run starts (trusted code may read it): the
# objects the collector tracks, its resident and its virtual memory (kB). It gives malloc's free
# pages back first: between runs the tests process trims only past a megabyte of them
# (`_tests_side._after_run`), so without this the probe read up to that slack of free pages,
# which made a right run's figure 1,076 kB from the one before it in CI once.
MEMORY = _problem(
    "memory",
    "def check(candidate):\n"
    "    import ctypes, gc\n"
    "    getattr(ctypes.CDLL(None), 'malloc_trim', lambda pad: None)(0)\n"
    "    status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
    "    held = [len(gc.get_objects())]\n"
    "    held += [int(status[k].split()[0]) for k in ('VmRSS', 'VmSize')]\n"
    "    assert candidate(0) is None, held\n",
)
# How far the tests process's memory may be from where it was, from one run to the next: a
# compiled test cached (64 are kept per process) and allocator slack, not a run's replies.
OBJECTS_SLACK = 10
KB_SLACK = 1024


def memory(pool: WorkerPool) -> list[int]:
    outcome = judge(pool, body("return 1"), MEMORY)
    return ast.literal_eval(outcome["result"].removeprefix("failed: AssertionError: "))


def memory_before(pool: WorkerPool, *problems: Problem) -> list[int]:
    """The tests process's memory once it has compiled (and cached) the tests of `problems` and
    the probe's own: what a run then holds is the run's, not the cache's."""
    for problem in (*problems, MEMORY):
        judge(pool, body("return 0"), problem)
    return memory(pool)


def assert_near(after: list[int], before: list[int]) -> None:
    objects, rss, size = (a - b for a, b in zip(after, before, strict=True))
    assert abs(objects) <= OBJECTS_SLACK and abs(rss) <= KB_SLACK and abs(size) <= KB_SLACK, (
        before,
        after,
    )


# Twenty asserts whose messages call the candidate again (as HumanEval's do), on replies of
# 100 kB: a right candidate and a wrong one send replies of the same sizes.
MESSAGES = _problem(
    "messages",
    "def check(candidate):\n"
    + "".join(f"    assert candidate({i}) == 'y' * 100_000, candidate({i})\n" for i in range(20)),
)


def test_a_wrong_answer_leaves_the_trusted_side_as_a_right_one_does(pool):
    """The correctness-dependent memory probe: a failed assert kept its exception, and so its
    message (the candidate's reply), until the verdict and, in a cycle with the tests' frames,
    after it; a right answer kept nothing. A candidate near a memory limit could tell the two
    apart. Now the tests process holds the same after a wrong run as after a right one."""
    right, wrong = body("return 'y' * 100_000"), body("return 'x' * 100_000")
    before = memory_before(pool, MESSAGES)
    assert judge(pool, right, MESSAGES, 5.0)["status"] == "passed"
    after_right = memory(pool)
    outcome = judge(pool, wrong, MESSAGES, 5.0)
    assert outcome["result"].startswith("failed: AssertionError: xxxx"), outcome
    after_wrong = memory(pool)
    assert_near(after_right, before)
    assert_near(after_wrong, before)


# Forty wrong answers of a megabyte each, each asked for again in the message: what the
# previous code kept of them stayed for the runs after it, and the 80 MB of replies pass the
# run's budget (64 MiB under the pool's 512 MiB cap) before the last calls.
SABOTAGE = _problem(
    "sabotage",
    "def check(candidate):\n"
    + "".join(f"    assert candidate({i}) == 0, candidate({i})\n" for i in range(40)),
)
# A correct sample with replies of 48 MB in all, three quarters of the budget.
LARGE = _problem(
    "large",
    "def check(candidate):\n"
    + "".join(f"    assert candidate({i}) == 'y' * 16_000_000\n" for i in range(3)),
)


def test_a_sample_cannot_leave_anything_for_the_next(pool):
    """The sabotage of a later sample: a sample that leaves the most it can behind (wrong
    answers with the largest messages, replies past the budget), then a correct sample with
    large replies in the same worker. The tests process's memory is back where it was after
    each run, and the correct sample passes."""
    before = memory_before(pool, SABOTAGE, LARGE)
    outcome = judge(pool, body("return 'x' * 1_000_000"), SABOTAGE, 5.0)
    assert outcome["status"] == "failed", outcome
    assert "too large for the tests' side" in outcome["result"], outcome
    assert_near(memory(pool), before)
    outcome = judge(pool, body("return 'y' * 16_000_000"), LARGE, 5.0)
    assert outcome["status"] == "passed", outcome
    assert_near(memory(pool), before)


SLOW_SECOND = 0.5
VIOLATION = _problem(
    "violation",
    "def check(candidate):\n" + "".join(f"    assert candidate({i}) == {i}\n" for i in range(3)),
)


@pytest.mark.parametrize(
    ("first", "second", "reason"),
    [
        # A reply that is not plain data.
        ("object()", "1", "which cannot cross to the tests"),
        # Two replies of 40 MB: the second passes the run's budget (64 MiB under a 512 MiB
        # cap; one reply can be no larger than that).
        ("'x' * 40_000_000", "'x' * 40_000_000", "too large for the tests' side"),
    ],
)
def test_a_violation_ends_the_run_as_a_normal_end_does(pool, first, second, reason):
    """The violation-path probe: the tests stopped reading at a protocol violation, which the
    candidate could tell from a normal end (its later replies no longer taken). Now the
    replies still owed are read and dropped: the run ends only once the candidate has
    answered every call of the batch (the last takes it SLOW_SECOND), as after a wrong
    answer."""
    completion = body(
        f"import time\nif x == 0:\n    return {first}\nif x == 1:\n    return {second}\n"
        f"time.sleep({SLOW_SECOND})\nreturn x"
    )
    outcome = judge(pool, completion, VIOLATION, 5.0)
    assert outcome["status"] == "failed" and reason in outcome["result"], outcome
    assert outcome["run_seconds"] >= SLOW_SECOND, outcome
    wrong = judge(
        pool,
        body(f"import time\nif x == 2:\n    time.sleep({SLOW_SECOND})\nreturn -1"),
        VIOLATION,
        5.0,
    )
    assert wrong["status"] == "failed" and wrong["run_seconds"] >= SLOW_SECOND, wrong
