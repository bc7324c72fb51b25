"""The sample's side of a build job (job mode "build"): a program of another language than
Python, compiled and run inside the sandbox.

The process that runs this is a sample like any other (forked by the spawner, confined by
Landlock, with the toolchain's read paths added for this job only, and the seccomp filter), and
it is the only one of the job's processes that holds the verdict's nonce pipe. It is not
dumpable, reads its job (source files, compile steps, run step, the end marker) from its own
descriptor, writes the files into its scratch directory, and runs each step as a child process
that inherits none of its descriptors but stdin (/dev/null) and two memory files for stdout
and stderr: the compiler and the built program never see the nonce or the verdict pipe. It
waits for each with waitpid (no resource usage asked for, which the filter refuses), so a
compiler that forks (g++'s driver, javac's JVM) needs nothing the filter denies; `go build`
does (os/exec asks wait4 for the child's rusage), which is why the Go toolchain calls the
compiler and the linker directly.

The verdict, like a single-process sample's: `pass_token(nonce) + b"P"` followed by the run
step's seconds, only when the program exited cleanly and its stdout ends with the job's end
marker (the tests ran to their end and held); otherwise `b"F" + status + b"\\n" + reason` with a
status of `benchmarks.execution.Status` ("compile error", "runtime error", "wrong answer",
"timed out"). A step over its time is killed and the job ends there; the jobs process then
kills whatever is left of the sample (its PID namespace or process group).

Standard library only, loaded by the zygote from its file (see `_zygote._load_sibling`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from typing import Any

if __package__:  # imported as benchmarks.execution._builder (the tests); in the worker, the
    from . import _kernel, _wire  # zygote hands this module its siblings as it loads it by path

NONCE_FD = 3
VERDICT_FD = 4
JOB_FD = 5
# How much of a step's stdout and stderr is read back (from the end): the marker is the last
# line, and a reason shows at most this much of a compiler's or a program's error output.
TAIL_BYTES = 4096
REASON_CHARS = 1500


class _Ended(Exception):
    """The job ends here, with this status and reason."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def run_build() -> None:
    """Run the build job read from JOB_FD and write the verdict to VERDICT_FD. Never returns."""
    read, write, exit_now, token = os.read, os.write, os._exit, _wire.pass_token
    # Not dumpable: a process of the same uid (the built program) cannot read our memory
    # through /proc even where Landlock is missing, nor attach to us (the filter refuses
    # ptrace anyway).
    _kernel.prctl(_kernel.PR_SET_DUMPABLE, 0)
    try:
        job = json.loads(_wire.Channel(JOB_FD).read_to_end(_wire.MAX_MESSAGE))  # closes it
        seconds = _build_and_run(job)
    except _Ended as end:
        reason = end.reason[:REASON_CHARS]
        write(VERDICT_FD, b"F" + end.status.encode() + b"\n" + reason.encode("utf-8", "replace"))
        exit_now(0)
    except BaseException as err:
        write(VERDICT_FD, b"Ferror\nthe build job failed in the sandbox: " + _wire.reason(err))
        exit_now(0)
    nonce = read(NONCE_FD, _wire.NONCE_BYTES)
    if len(nonce) != _wire.NONCE_BYTES:
        write(VERDICT_FD, b"Ffailed\nthe nonce was taken")
    else:
        write(VERDICT_FD, token(nonce) + b"P" + f"{seconds:.4f}".encode())
    exit_now(0)


def _build_and_run(job: dict[str, Any]) -> float:
    """Write the files, compile, run; the run step's seconds when the tests ran and held, else
    `_Ended` with the status."""
    for name, text in job["files"].items():
        if "/" in name or name.startswith("."):
            raise _Ended("error", f"a build file has a bad name ({name!r})")
        with open(name, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
    env = {**os.environ, **job.get("env", {})}
    compile_deadline = time.monotonic() + float(job["compile_timeout"])
    for argv in job["compile"]:
        code, stdout, stderr, late = _step(argv, env, compile_deadline)
        if late:
            raise _Ended(
                "compile error",
                f"the compiler ran past its {float(job['compile_timeout']):g} s",
            )
        if code != 0:
            # Go's compiler writes its errors to stdout.
            raise _Ended("compile error", _exit_words(code) + _shown(stderr or stdout))
    started = time.monotonic()
    code, stdout, stderr, late = _step(job["run"], env, started + float(job["run_timeout"]))
    seconds = time.monotonic() - started
    if late:
        raise _Ended("timed out", "timed out")
    marker = job["end_marker"]
    last = stdout.rstrip().rsplit("\n", 1)[-1].strip()
    if code == 0 and last == marker:
        return seconds
    if last == marker + " wrong":
        raise _Ended("wrong answer", "an assert of the tests failed" + _shown(stderr))
    assert_failure = job.get("assert_failure")
    if code != 0 and assert_failure and assert_failure in stderr:
        raise _Ended("wrong answer", "an assert of the tests failed" + _shown(stderr))
    if code == -signal.SIGXCPU:
        raise _Ended("timed out", "timed out (CPU time limit)")
    if code == 0:
        raise _Ended("runtime error", "the program exited before the tests finished")
    if code == -signal.SIGXFSZ:
        raise _Ended("runtime error", "the program wrote more than the file size limit")
    if code == -signal.SIGKILL:
        raise _Ended("runtime error", "killed by SIGKILL (CPU or memory limit)" + _shown(stderr))
    raise _Ended("runtime error", _exit_words(code) + _shown(stderr))


def _step(argv: list[str], env: dict[str, str], deadline: float) -> tuple[int, str, str, bool]:
    """Run `argv` with stdout and stderr in memory files until it ends or `deadline`:
    (returncode, stdout tail, stderr tail, ran late). No descriptor of ours but those three
    reaches it (close_fds), and it stays in our process group (the filter refuses setpgid);
    a step that runs late is killed, and the jobs process kills what it started."""
    stdout = os.memfd_create("stdout", os.MFD_CLOEXEC)
    stderr = os.memfd_create("stderr", os.MFD_CLOEXEC)
    try:
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=env,
                close_fds=True,
            )
        except OSError as err:
            raise _Ended("error", f"cannot start {argv[0]} ({err.strerror})") from None
        try:
            code = process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return -signal.SIGKILL, "", "", True
        return code, _tail(stdout), _ends(stderr), False
    finally:
        os.close(stdout)
        os.close(stderr)


def _tail(fd: int) -> str:
    size = os.fstat(fd).st_size
    return os.pread(fd, TAIL_BYTES, max(0, size - TAIL_BYTES)).decode("utf-8", "replace")


def _ends(fd: int) -> str:
    """The start and the end of what `fd` holds (a compiler's first error, a program's
    exception, an assert's message: at the start unless something was written before)."""
    size = os.fstat(fd).st_size
    if size <= 2 * TAIL_BYTES:
        return os.pread(fd, size, 0).decode("utf-8", "replace")
    return os.pread(fd, TAIL_BYTES, 0).decode("utf-8", "replace") + "\n...\n" + _tail(fd)


def _shown(text: str) -> str:
    text = text.strip()
    return f": {text[:REASON_CHARS]}" if text else ""


def _exit_words(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"killed by {name}"
    return f"exited with status {code}"
