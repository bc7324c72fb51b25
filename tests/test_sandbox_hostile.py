"""Hostile samples: each must be judged a failure, leave no trace outside the sandbox, and leave
the harness able to judge the next sample."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from pathlib import Path

import pytest

from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._pool import is_sandbox_uid, sandbox_uid_pairs
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem, StdioTest
from tests.sandbox_helpers import ADD, EXPECTED_LEVEL, GOOD

TIMEOUT = 1.0
# Hostile samples compute the wrong answer, so that any "passed" would be a forged verdict.
WRONG = "    return a - b\n"
MARK = uuid.uuid4().hex


@pytest.fixture(scope="module")
def pool():
    config = ExecutionConfig(workers=2, memory_mb=512, processes=32, timeout=TIMEOUT)
    with WorkerPool(config) as pool:
        yield pool


def judge(pool, completion: str, problem: Problem = ADD) -> dict:
    job = _job(problem, completion, TIMEOUT)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    return outcome


def sandbox_processes(pool: WorkerPool | None = None) -> list[int]:
    """The processes running under a sandbox uid: `pool`'s own uids where given (a pool of
    another test module, on the other pytest-xdist worker, runs its samples at the same time
    under uids of its own slot), else any pool's."""
    mine = (
        None
        if pool is None
        else {
            uid
            for index in range(pool.size)
            for pair in sandbox_uid_pairs(index, pool.size, pool.uid_slot)
            for uid in pair
        }
    )
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        if is_sandbox_uid(uid) and (mine is None or uid in mine):
            pids.append(int(entry))
    return pids


def body(code: str) -> str:
    """Hostile statements as the function body, before a wrong answer."""
    lines = code.strip("\n").splitlines()
    return "".join(f"    {line}\n" for line in lines) + WRONG


def toplevel(code: str) -> str:
    """Hostile statements run at import time, after a wrong function."""
    return WRONG + "\n" + code.strip("\n") + "\n"


def test_pool_reaches_the_expected_isolation_here(pool):
    # CI runs as root with namespaces and cgroup v1 (full), and again in a container-like
    # environment (unprivileged): anything less is a regression.
    assert pool.isolation.level == EXPECTED_LEVEL, pool.isolation.describe()
    assert judge(pool, GOOD)["status"] == "passed"


HOSTILE = {
    "ignore_signals_and_loop": toplevel(
        """
import signal
for s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
"""
    ),
    "cpu_burn_threads": toplevel(
        """
import threading
def burn():
    while True:
        pass
for _ in range(4):
    threading.Thread(target=burn, daemon=True).start()
burn()
"""
    ),
    "memory_bomb_at_once": toplevel("x = bytearray(50 * 2**30)\n"),
    "memory_bomb_growing": toplevel(
        """
hoard = []
while True:
    hoard.append(bytearray(2**24))
"""
    ),
    "fork_storm": toplevel(
        """
import os
while True:
    try:
        if os.fork() == 0:
            while True:
                pass
    except OSError:
        pass
"""
    ),
    "thread_storm": toplevel(
        """
import threading, time
while True:
    threading.Thread(target=time.sleep, args=(100,)).start()
"""
    ),
    "daemon_with_own_session": toplevel(
        f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(50):
            time.sleep(0.1)
            for path in ("/tmp/daemon-{MARK}", os.path.expanduser("~") + "/daemon-{MARK}"):
                try:
                    open(path, "w").write("alive")
                except OSError:
                    pass
    os._exit(0)
raise SystemExit(1)
"""
    ),
    "subprocess_in_background": toplevel(
        """
import subprocess
subprocess.Popen(["sh", "-c", "sleep 30"], start_new_session=True)
raise SystemExit(1)
"""
    ),
    "kill_parent": toplevel(
        """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
for pid in range(2, 400):
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
raise SystemExit(1)
"""
    ),
    "kill_process_group_and_everyone": toplevel(
        """
import os, signal
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
os.killpg(0, signal.SIGKILL)
"""
    ),
    "close_stdio_and_every_fd": toplevel(
        """
import os
os.closerange(0, 1024)
"""
    ),
    "stdout_stderr_flood": toplevel(
        """
import sys
while True:
    print("x" * 65536)
    sys.stderr.write("y" * 65536)
"""
    ),
    "segfault_via_ctypes": toplevel("import ctypes\nctypes.string_at(0)\n"),
    "read_stdin": body("data = input()"),
    "sys_exit_0": body("import sys\nsys.exit(0)"),
    "os_exit_0": body("import os\nos._exit(0)"),
    "atexit_os_exit_0": (
        "    import atexit, os\n    atexit.register(os._exit, 0)\n    return a - b\n"
    ),
    "write_passed_to_every_fd": toplevel(
        """
import os
for fd in range(1024):
    for message in (b"passed\\n", b"P", b'{"status": "passed", "result": "passed"}\\n'):
        try:
            os.write(fd, message)
        except OSError:
            pass
os._exit(0)
"""
    ),
    "forge_verdict_by_echoing_every_fd": (
        "    return 0\n\n"
        + """
import os, fcntl
seen = b""
for fd in range(64):
    try:
        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
        seen += os.read(fd, 4096)
    except OSError:
        pass
for fd in range(64):
    for message in (seen + b"P", seen, b"P", seen[-16:] + b"P"):
        try:
            os.write(fd, message)
        except OSError:
            pass
os._exit(0)
"""
    ),
    "forge_verdict_by_guessing": (
        "    return 0\n\n"
        + """
import os
for fd in range(3, 64):
    for _ in range(50):
        try:
            os.write(fd, os.urandom(32) + b"P")
        except OSError:
            break
os._exit(0)
"""
    ),
    # Knows this harness's token format, and looks for the nonce among the interpreter's objects.
    "forge_verdict_from_interpreter_memory": (
        "    return 0\n\n"
        + """
import gc, hashlib, os, sys
candidates = [o for o in gc.get_objects() if isinstance(o, bytes) and len(o) == 16]
frame = sys._getframe()
while frame is not None:
    candidates += [v for v in frame.f_locals.values() if isinstance(v, bytes) and len(v) == 16]
    frame = frame.f_back
for nonce in candidates:
    try:
        os.write(4, hashlib.sha256(b"boi verdict: passed\\0" + nonce).digest() + b"P")
    except OSError:
        pass
os._exit(0)
"""
    ),
    "network_connect_localhost": "NETWORK",  # built per test: needs the listener's port
    "write_tmp": toplevel(f"open('/tmp/boi-{MARK}', 'w').write('x')\n"),
    "write_home": "HOME",  # the harness's home, not the sample's
    "write_dev_shm": toplevel(f"open('/dev/shm/boi-{MARK}', 'w').write('x')\n"),
    "write_var_tmp": toplevel(f"open('/var/tmp/boi-{MARK}', 'w').write('x')\n"),
    "delete_outside_scratch": "DELETE",
    "symlink_trap_for_cleanup": "SYMLINK",
    "fill_scratch_disk": toplevel(
        """
with open("big", "wb") as handle:
    while True:
        handle.write(b"x" * 2**20)
"""
    ),
    "ten_megabyte_completion": "    return 0\n" + "# " + "x" * (10 * 2**20) + "\n",
    "nul_bytes": "    return a + b\x00\n",
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_sample_fails_without_side_effects(pool, kind, tmp_path):
    completion = HOSTILE[kind]
    home_target = Path(os.path.expanduser("~")) / f"boi-{MARK}"
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    accepted: list[object] = []
    listener = None
    if completion == "NETWORK":
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        port = listener.getsockname()[1]

        def accept() -> None:
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                try:
                    accepted.append(listener.accept())
                except (TimeoutError, OSError):
                    pass

        threading.Thread(target=accept, daemon=True).start()
        completion = toplevel(
            f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=0.5)\n"
        )
    elif completion == "HOME":
        completion = toplevel(f"open({str(home_target)!r}, 'w').write('x')\n")
    elif completion == "DELETE":
        completion = toplevel(
            f"import os, shutil\nos.unlink({str(victim)!r})\nshutil.rmtree({str(tmp_path)!r})\n"
        )
    elif completion == "SYMLINK":
        completion = toplevel(
            f"import os\nos.symlink({str(victim)!r}, 'link')\nos.symlink({str(tmp_path)!r}, 'dir')\n"
            "raise SystemExit(1)\n"
        )
    before = set(sandbox_processes(pool))
    outcome = judge(pool, completion)
    assert outcome["status"] in ("failed", "timed out"), outcome
    # Nothing escaped.
    assert not accepted, "a sample reached a listener on 127.0.0.1"
    time.sleep(0.6 if kind == "daemon_with_own_session" else 0)
    for path in (
        Path(f"/tmp/boi-{MARK}"),
        Path(f"/dev/shm/boi-{MARK}"),
        Path(f"/var/tmp/boi-{MARK}"),
    ):
        assert not path.exists(), path
    assert not home_target.exists()
    assert not Path(f"/tmp/daemon-{MARK}").exists()
    assert victim.read_text() == "keep me"
    assert set(sandbox_processes(pool)) <= before, "a sandboxed process outlived its sample"
    # The harness is alive and still judges correctly.
    assert judge(pool, GOOD)["status"] == "passed"
    if listener is not None:
        listener.close()


def test_at_least_twenty_hostile_kinds():
    assert len(HOSTILE) >= 20


def test_timeouts_are_enforced_from_outside(pool):
    """A sample that ignores every signal and loops is killed by its worker at the timeout:
    "timed out" is the worker's verdict (a worker held past its job's deadline, 31.5 s here,
    would be given up as dead: "error"), and nothing of the sample is left running. No wall
    clock bound: a loaded machine may stretch the kill by seconds."""
    before = set(sandbox_processes(pool))
    outcome = judge(pool, HOSTILE["ignore_signals_and_loop"])
    assert outcome["status"] == "timed out", outcome
    assert set(sandbox_processes(pool)) <= before, "the looping sample outlived its timeout"


def test_memory_cap_reports_memory_error(pool):
    outcome = judge(pool, HOSTILE["memory_bomb_at_once"])
    assert "MemoryError" in outcome["result"]


def test_scratch_is_writable_and_private(pool):
    writes = (
        "    import os\n    open('note.txt', 'w').write('hi')\n"
        "    assert os.listdir('.') == ['note.txt']\n" + GOOD
    )
    assert judge(pool, writes)["status"] == "passed"
    # The previous sample's file is gone: every sample starts with an empty scratch directory.
    assert judge(pool, writes)["status"] == "passed"


def test_stdio_program_gets_input_and_is_compared_loosely(pool):
    problem = Problem(
        task_id="t/double",
        benchmark="test",
        prompt='"""Double a number."""\n',
        entry_point=None,
        stdio_tests=(StdioTest("3\n", "6\n"), StdioTest("10", " 20  ")),
    )
    assert judge(pool, "print(int(input()) * 2)\n", problem)["status"] == "passed"
    wrong = judge(pool, "print(int(input()) * 3)\n", problem)
    assert wrong["status"] == "failed" and "wrong answer on test 0" in wrong["result"]
    assert (
        judge(pool, "import sys\nprint(int(input()) * 2)\nsys.exit(0)\n", problem)["status"]
        == "passed"
    )
    assert (
        judge(pool, "import sys\nprint(int(input()) * 2)\nsys.exit(3)\n", problem)["status"]
        == "failed"
    )


def test_stdio_output_judged_as_the_statement_says(pool):
    from benchmarks.problem import OutputJudge

    def contest(judge: OutputJudge, expected: str) -> Problem:
        return Problem(
            task_id="t/judge",
            benchmark="test",
            prompt='"""Answer."""\n',
            entry_point=None,
            stdio_tests=(StdioTest("", expected),),
            metadata={"output_judge": judge.to_json()},
        )

    floats = contest(OutputJudge(float_tolerance=1e-6), "0.3333333333 YES\n")
    assert judge(pool, "print(1/3, 'YES')\n", floats)["status"] == "passed"
    assert judge(pool, "print('0.33334 YES')\n", floats)["status"] == "failed"
    # Case matters unless the statement says otherwise.
    assert judge(pool, "print(1/3, 'yes')\n", floats)["status"] == "failed"
    any_case = contest(OutputJudge(case_insensitive=True), "YES 7\n")
    assert judge(pool, "print('yEs 7')\n", any_case)["status"] == "passed"
    # An integer answer is compared exactly: 7.0000001 is not 7.
    assert judge(pool, "print('yes 7.0000001')\n", any_case)["status"] == "failed"
    assert judge(pool, "print('yes 7 8')\n", any_case)["status"] == "failed"
    several = contest(OutputJudge(several_answers="print any of them"), "1 2\n")
    outcome = judge(pool, "print('2 1')\n", several)
    assert outcome["status"] == "failed"
    assert "accepts several answers" in outcome["result"]


def test_a_python_other_users_cannot_enter_is_refused_with_advice():
    """Without namespaces to expose it, a Python under a private directory (pyenv in a 0700
    /root) cannot be read by any sandbox uid: every import would fail in every sample. The
    uid probe finds that and says what to do (before, a uid that could not even stat the
    standard library passed the probe)."""
    from benchmarks.common.errors import UserError
    from tests.sandbox_helpers import python_hidden_from_other_users

    hidden = python_hidden_from_other_users()
    if hidden is None:
        pytest.skip("this Python is readable by other users")
    config = ExecutionConfig(workers=1, use_namespaces=False, use_cgroups=False)
    with pytest.raises(UserError, match=r"cannot read this Python installation.*chmod o\+rx"):
        WorkerPool(config)


def test_weak_isolation_is_refused_without_opt_in():
    from benchmarks.common.errors import UserError

    # Landlock and seccomp alone, without any process cap: refused, with advice that fits.
    uncapped = ExecutionConfig(workers=1, use_namespaces=False, use_cgroups=False, drop_uid=False)
    with pytest.raises(UserError, match=r"refusing to run untrusted code.*no process cap.*--allow-weak-isolation"):  # fmt: skip
        WorkerPool(uncapped)
    bare = dict(
        workers=1,
        use_namespaces=False,
        use_cgroups=False,
        drop_uid=False,
        use_landlock=False,
        use_seccomp=False,
    )
    with pytest.raises(UserError, match=r"refusing to run untrusted code.*--allow-weak-isolation"):
        WorkerPool(ExecutionConfig(**bare))
    opted_in = ExecutionConfig(**bare, allow_weak_isolation=True)
    with WorkerPool(opted_in) as weak_pool:
        assert weak_pool.isolation.level == "weak"
        assert not weak_pool.isolation.network and not weak_pool.isolation.filesystem
        assert "OPEN" in weak_pool.isolation.describe()
        assert judge(weak_pool, GOOD)["status"] == "passed"
        assert judge(weak_pool, HOSTILE["atexit_os_exit_0"])["status"] == "failed"
