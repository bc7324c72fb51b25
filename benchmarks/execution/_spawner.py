"""The spawner: the process that forks every sandboxed process running generated code, and the
jobs process's line to it (`SpawnerClient`).

The spawner is forked from the zygote at start-up, before any job exists, and only ever
receives spawn requests (a kind, a scratch directory, a timeout) with the new process's
descriptors, as JSON datagrams with the descriptors attached (SCM_RIGHTS) on a SOCK_SEQPACKET
socket; it answers with the new pid, then with its exit status. It never receives a program, a
test or an expected value, so a sample forked from it holds nothing of them in memory: it reads
its own program from its descriptors (`_enter_sample`, then `_candidate.py`).

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time
from collections.abc import Callable

if __package__:  # imported as benchmarks.execution._spawner (the tests); in the worker, the
    from . import _builder, _candidate, _kernel, _wire  # zygote hands its siblings by path

# The exit code of a sandboxed child that refused to run generated code, as its confinement
# failed (never a verdict; `_setup.EXIT_NO_USER_NAMESPACE` is the other such code).
EXIT_UNCONFINED = 73

# The worker's handle that turns a process just forked into a confined sample
# (`_setup.Setup.enter_sample`): scratch directory, stdin and stdout (None: /dev/null), the
# descriptors from 3 on, the CPU-time limit, a build job's toolchain. It raises on any failure.
EnterSample = Callable[[str, "int | None", "int | None", tuple[int, ...], int, "str | None"], None]


class SpawnFailed(Exception):
    """The spawner could not start a sandboxed process (not the sample's fault)."""


class SpawnerClient:
    """The jobs process's side of the spawner socket: spawn requests, pids and exit statuses."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.exits: dict[int, int] = {}

    def _next(self, deadline: float) -> dict | None:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self.sock], [], [], left)[0]:
            return None
        data = self.sock.recv(4096)
        if not data:
            raise SpawnFailed("the spawner is gone")
        message = json.loads(data)
        if not isinstance(message, dict):
            raise SpawnFailed("the spawner sent something other than an object")
        if "exit" in message:
            self.exits[int(message["exit"])] = int(message["status"])
        return message

    def spawn(self, request: dict, fds: list[int], deadline: float) -> int:
        socket.send_fds(self.sock, [json.dumps(request).encode()], fds)
        # Start-up is the spawner's, not the sample's: a busy machine must not turn it into
        # the sample's timeout, so the wait for the pid has a deadline of its own.
        deadline = max(deadline, time.monotonic() + 30.0)
        while True:
            message = self._next(deadline)
            if message is None:
                raise SpawnFailed("the spawner did not answer")
            if "error" in message:
                raise SpawnFailed(str(message["error"]))
            if "pid" in message:
                pid = int(message["pid"])
                self.exits.pop(pid, None)  # an earlier process that had this pid
                return pid

    def wait(
        self, pid: int, deadline: float, guard: Callable[[], bool] | None = None
    ) -> int | None:
        """`pid`'s wait status, or None if it is still running at `deadline` (or when `guard()`,
        polled every GUARD_SECONDS, says the run went over a limit)."""
        while pid not in self.exits:
            step = (
                deadline if guard is None else min(deadline, time.monotonic() + _wire.GUARD_SECONDS)
            )
            if self._next(step) is None:
                if time.monotonic() >= deadline or (guard is not None and guard()):
                    return None
        return self.exits[pid]

    def forget(self, pid: int) -> None:
        self.exits.pop(pid, None)


class Spawner:
    """The process that forks every sandboxed process running generated code.

    It is forked from the zygote at start-up, before any job exists, and only ever receives
    spawn requests (a kind, a scratch directory, a timeout) with the descriptors of the new
    process: never a program, a test or an expected value. A sample forked from it therefore
    holds, in memory, nothing but the interpreter, the preloaded standard library and the
    program it then reads from its own descriptors; not the tests of its job, not earlier
    jobs, not the reference solutions used for timing. In a PID namespace it is PID 1, so the
    jobs process's `kill(-1)` spares it, and it reaps the samples' orphans.
    """

    def __init__(
        self,
        enter_sample: EnterSample,
        own_namespace: int | None,
        sock: socket.socket,
        jobs_pid: int,
    ) -> None:
        # What the spawner knows of the worker's set-up: how a forked process becomes a sample,
        # and the PID namespace to return to after forking one into a new one (None: samples
        # get no namespaces of their own).
        self.enter_sample = enter_sample
        self.own_namespace = own_namespace
        self.sock = sock
        self.jobs_pid = jobs_pid
        self.spawned: set[int] = set()

    def serve(self) -> None:
        # Orphans of the samples come to us (without a PID namespace too), and we reap them.
        _kernel.prctl(_kernel.PR_SET_CHILD_SUBREAPER, 1)
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w)
        # A handler (not SIG_IGN, which would reap for us): we reap, and report statuses.
        signal.signal(signal.SIGCHLD, _ignore_signal)
        while True:
            try:
                readable = select.select([self.sock.fileno(), wake_r], [], [])[0]
            except InterruptedError:
                continue
            if wake_r in readable:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            self._reap()
            if self.sock.fileno() in readable:
                try:
                    data, fds, _, _ = socket.recv_fds(self.sock, 4096, 16)
                except OSError:
                    data, fds = b"", []
                if not data:
                    self._exit()
                self._spawn(json.loads(data), fds)

    def _spawn(self, request: dict, fds: list[int]) -> None:
        own_namespace = self.own_namespace
        try:
            if own_namespace is not None:
                # The next child is PID 1 of a new PID namespace (see `Setup.enter_sample`).
                _kernel.check(_kernel.libc.unshare(_kernel.CLONE_NEWPID), "unshare")
            pid = os.fork()
        except OSError as err:
            for fd in fds:
                os.close(fd)
            self._send({"error": f"fork failed ({err.strerror})"})
            return
        if pid != 0 and own_namespace is not None:
            # Back to our own namespace for our children, so that the next unshare can work.
            _kernel.check(_kernel.libc.setns(own_namespace, _kernel.CLONE_NEWPID), "setns")
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _enter_sample(self.enter_sample, request, fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        self.spawned.add(pid)
        self._send({"pid": pid})

    def _reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.jobs_pid:
                self._exit()
            if pid in self.spawned:
                self.spawned.discard(pid)
                self._send({"exit": pid, "status": status})

    def _send(self, message: dict) -> None:
        try:
            self.sock.send(json.dumps(message).encode())
        except OSError:
            self._exit()

    def _exit(self) -> None:
        """The jobs process is gone: so is everything this worker ran."""
        for pid in self.spawned:
            _kernel.kill_group(pid)
        os._exit(0)


def _ignore_signal(signum: int, frame: object) -> None:
    pass


def _enter_sample(enter_sample: EnterSample, request: dict, fds: list[int]) -> None:
    """In a process the spawner just forked: become the sandboxed sample, read the program
    from our own descriptors and run it. Never returns."""
    _kernel.set_name(b"boi-sample")
    kind = request["kind"]
    timeout = float(request["timeout"])
    stdin_fd: int | None
    stdout_fd: int | None
    if kind == "candidate":
        stdin_fd, stdout_fd, own = None, None, tuple(fds)  # the calls in, the replies out
    else:
        stdin_fd, stdout_fd, *rest = fds  # then the nonce, the verdict, the program
        own = tuple(rest)
    try:
        # A build job (`_builder.py`) is confined by its toolchain's ruleset, which adds the
        # toolchain's paths to the default read set; every other sample by the worker's.
        enter_sample(
            request["scratch"],
            stdin_fd,
            stdout_fd,
            own,
            _cpu_seconds(timeout),
            request.get("toolchain"),
        )
    except BaseException:
        os._exit(EXIT_UNCONFINED)  # never run generated code half-confined
    if kind == "candidate":
        _candidate.serve_candidate()
    elif kind == "build":
        _builder.run_build()
    else:
        program = (
            _wire.Channel(_candidate.PROGRAM_FD)
            .read_to_end(_wire.MAX_MESSAGE)
            .decode("utf-8", "surrogatepass")
        )
        _candidate.run_sample(program, kind == "stdio")


def _cpu_seconds(timeout: float) -> int:
    """The CPU-time limit of a process that runs one sample with this wall-clock timeout."""
    return int(timeout) + 2
