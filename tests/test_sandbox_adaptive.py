"""Adaptive attacks: samples written against this very harness, judged in both judging modes.

In the separated mode (`ExecutionConfig(separate_candidate=True)`, the default) the candidate
(prompt + completion) runs in its own sandboxed process that serves calls, and the tests run in
another process that alone holds the verdict channel; values cross as plain data
("boi-plain/1"). Every attack here must fail there, with a reason. In the single-process mode
(`separate_candidate=False`, HumanEval's own design) some of them are known to forge a pass;
those are only recorded (set BOI_ADAPTIVE_REPORT=path to get one JSON line per judgement), the
others must fail there too. The positive tests check that honest completions still pass in the
separated mode when values, keyword arguments, exceptions, mutated arguments and classes or
helpers from the prompt cross between the two processes.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass

import pytest

from benchmarks.execution import ExecutionConfig, WorkerPool, execute_samples
from benchmarks.execution._pool import is_sandbox_uid
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem

TIMEOUT = 1.0
# No attack may hold a worker much longer than its timeout (a hung call, a huge value).
PATIENCE = TIMEOUT + 8.0
CROSS = r"cannot cross to the tests \(boi-plain/1\)"
PLAIN = r"boi-plain/1"
FAILED = r"^(failed|timed out)"
MODES = {"separated": True, "single-process": False}


def _problem(name: str, prompt: str, test: str, entry_point: str) -> Problem:
    return Problem(
        task_id=f"t/{name}", benchmark="test", prompt=prompt, entry_point=entry_point, test=test
    )


ADD = _problem(
    "add", "def add(a, b):\n", "def check(candidate):\n    assert candidate(2, 3) == 5\n", "add"
)
ADD_STRICT = _problem(
    "add_strict",
    "def add(a, b):\n",
    "def check(candidate):\n    r = candidate(2, 3)\n"
    "    assert isinstance(r, int) and not isinstance(r, bool)\n    assert r == 5\n",
    "add",
)
HALF_ABS = _problem(
    "half_abs",
    "def half(x):\n",
    "def check(candidate):\n    assert abs(candidate(3.0) - 1.5) < 1e-9\n",
    "half",
)
HALF_MATH = _problem(
    "half_math",
    "def half(x):\n",
    "def check(candidate):\n    import math\n    assert math.isclose(candidate(3.0), 1.5)\n",
    "half",
)
GREET = _problem(
    "greet",
    "def greet(name):\n",
    "def check(candidate):\n    assert candidate('x') == 'hello x'\n",
    "greet",
)
SORTED = _problem(
    "sorted",
    "def sort_list(xs):\n",
    "def check(candidate):\n    assert candidate([3, 1, 2]) == [1, 2, 3]\n",
    "sort_list",
)
COUNT = _problem(
    "count",
    "def count(s):\n",
    "def check(candidate):\n    assert candidate('aab') == {'a': 2, 'b': 1}\n",
    "count",
)
MUTATE = _problem(
    "mutate",
    "def sort_in_place(lst):\n",
    "def check(candidate):\n    lst = [3, 1, 2]\n    candidate(lst)\n    assert lst == [1, 2, 3]\n",
    "sort_in_place",
)
RAISES = _problem(
    "raises",
    "def root(x):\n",
    "def check(candidate):\n    try:\n        candidate(-1)\n"
    "    except ValueError as err:\n        assert err.args == ('negative',)\n"
    "    else:\n        assert False\n",
    "root",
)
POINT = _problem(
    "point",
    "class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n\n"
    "    def __eq__(self, other):\n"
    "        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)\n\n\n"
    "def mirror(p):\n",
    "def check(candidate):\n    assert candidate(Point(1, 2)) == Point(2, 1)\n",
    "mirror",
)

# The tests consume the candidate through map(): a StopIteration ends the iteration early.
EVEN = _problem(
    "even",
    "def is_even(n):\n",
    "def check(candidate):\n    assert all(map(candidate, [2, 4, 6]))\n"
    "    assert not any(map(candidate, [1, 3]))\n",
    "is_even",
)
# The tests call a method of the prompt's class on the returned object.
SHAPE = _problem(
    "shape",
    "class Shape:\n    def __init__(self, w, h):\n        self.w, self.h = w, h\n\n"
    "    def is_square(self):\n        return self.w == self.h\n\n\n"
    "def squarify(s):\n",
    "def check(candidate):\n    r = candidate(Shape(2, 3))\n"
    "    assert type(r) is Shape and r.is_square() and r.w == 2\n",
    "squarify",
)
# The tests use a helper the prompt defines (as HumanEval/38 uses encode_cyclic).
CYCLIC = _problem(
    "cyclic",
    "def encode(s):\n    return s[1:] + s[:1]\n\n\ndef decode(s):\n",
    "def check(candidate):\n    for w in ['abc', 'hello']:\n"
    "        assert candidate(encode(w)) == w\n",
    "decode",
)

GOOD_ADD = "    return a + b\n"
WRONG_ADD = "    return a - b\n"
# The pass token of the single-process mode, as a sample written against this harness knows it.
FORGE = """
import hashlib, os
def _forge():
    try:
        nonce = os.read(3, 16)
        os.write(4, hashlib.sha256(b"boi verdict: passed\\0" + nonce).digest() + b"P")
    except OSError:
        pass
    os._exit(0)
"""
YES = """
class Yes:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = object.__hash__
"""
# Finds 16-byte strings readable from any other process's descriptors (through /proc), and
# writes the matching pass token to every descriptor of theirs it can open for writing.
PROC_FORGE = """
import hashlib, os
def _steal():
    me, found, sinks = str(os.getpid()), [], []
    for pid in [p for p in os.listdir("/proc") if p.isdigit() and p != me]:
        try:
            start = int(open(f"/proc/{pid}/maps").readline().split("-")[0], 16)
            with open(f"/proc/{pid}/mem", "rb") as mem:
                mem.seek(start)
                mem.read(4096)
        except (OSError, ValueError):
            pass
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{pid}/fd/{fd}"
            try:
                r = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
                data = os.read(r, 16)
                os.close(r)
                if len(data) == 16:
                    found.append((path, data))
            except OSError:
                pass
            try:
                sinks.append(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
    for path, nonce in found:
        for fd in sinks:
            try:
                os.write(fd, hashlib.sha256(b"boi verdict: passed\\0" + nonce).digest() + b"P")
            except OSError:
                pass
        try:
            os.write(os.open(path, os.O_WRONLY | os.O_NONBLOCK), nonce)
        except OSError:
            pass
    os._exit(0)
"""
# Code that forges the single-process verdict if the tests' process ever runs it.
EXEC_FORGE = (
    "import hashlib, os\n"
    "for fd in range(3, 12):\n"
    "    try:\n"
    "        n = os.read(fd, 16)\n"
    "        os.write(fd + 1, hashlib.sha256(b'boi verdict: passed\\0' + n).digest() + b'P')\n"
    "    except OSError:\n"
    "        pass\n"
    "os._exit(0)\n"
)
EVERY_FD = """
import json, os, struct
def _spray():
    frames = [b"P", b"passed\\n", json.dumps({"status": "passed", "result": 5}).encode() + b"\\n"]
    frames += [struct.pack(">I", len(f)) + f for f in list(frames)]
    for fd in range(256):
        for frame in frames:
            try:
                os.write(fd, frame)
            except OSError:
                pass
"""


def sandbox_processes() -> set[int]:
    """Sandboxed processes under this test process (other runs on the machine have their own)."""
    parents, uids = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/status", encoding="utf-8") as file:
                    status = file.read()
            except OSError:
                continue
            fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
            parents[int(entry)] = int(fields["PPid"])
            uids[int(entry)] = int(fields["Uid"].split()[0])
    mine, found = {os.getpid()}, True
    while found:
        found = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                found = True
    return {pid for pid in mine if is_sandbox_uid(uids[pid])}


def indent(code: str) -> str:
    return "".join(f"    {line}\n" for line in code.strip("\n").splitlines())


@dataclass(frozen=True)
class Attack:
    completion: str
    problem: Problem = ADD
    # "fail": must already fail in the single-process mode; "record": known or possible forgery.
    single: str = "record"
    # What the separated mode's result must match (re.search).
    separated: str = FAILED
    # Kills or stops other processes: check that the harness still judges afterwards.
    disruptive: bool = False


ATTACKS = {
    # (1) The classic: an object equal to everything.
    "eq_always_true": Attack(indent(YES + "return Yes()"), separated=CROSS),
    # (2) Forge the single-process verdict at import time: read the nonce (fd 3), write the
    # token to the verdict pipe (fd 4), exit before any test runs.
    "forge_verdict_at_import": Attack(WRONG_ADD + FORGE + "_forge()\n"),
    # (3) The same from inside the call, once the tests are running.
    "forge_verdict_in_call": Attack("    _forge()\n" + WRONG_ADD + FORGE),
    # (4) Walk the interpreter's objects and frames for `check` (patch it) and for the nonce.
    "patch_check_via_gc_and_frames": Attack(
        indent(
            """
import gc, hashlib, os, sys
for o in gc.get_objects():
    if getattr(o, "__name__", None) == "check":
        try:
            o.__code__ = (lambda candidate: None).__code__
        except (AttributeError, TypeError, ValueError):
            pass
f = sys._getframe()
while f is not None:
    f.f_globals["check"] = lambda candidate: None
    for v in list(f.f_locals.values()):
        if isinstance(v, bytes) and len(v) == 16:
            try:
                os.write(4, hashlib.sha256(b"boi verdict: passed\\0" + v).digest() + b"P")
            except OSError:
                pass
    f = f.f_back
"""
        )
        + WRONG_ADD
    ),
    # (5) Patch builtins the tests use: abs() (the test computes |r - 1.5| < 1e-9) ...
    "patch_builtins_abs": Attack(
        "    return 0.0\n\nimport builtins\nbuiltins.abs = lambda x: 0\n", HALF_ABS
    ),
    # ... and AssertionError, isinstance, operator.eq, BaseException.
    "patch_builtins_assert_eq": Attack(
        WRONG_ADD + "\nimport builtins, operator\n"
        "builtins.AssertionError = type('AssertionError', (Exception,), {})\n"
        "builtins.isinstance = lambda o, t: True\n"
        "operator.eq = lambda a, b: True\n"
        "builtins.BaseException = type('BaseException', (Exception,), {})\n"
    ),
    # (6) Subclasses of plain types with a lying __eq__ (and a lying __iter__/items()).
    "int_subclass_eq": Attack(
        indent(
            "class I(int):\n    __eq__ = lambda s, o: True\n    __ne__ = lambda s, o: False\n"
            "    __hash__ = int.__hash__\nreturn I(0)"
        ),
        separated=f"{CROSS}|AssertionError",
    ),
    "str_subclass_eq": Attack(
        indent(
            "class S(str):\n    __eq__ = lambda s, o: True\n    __hash__ = str.__hash__\n"
            "return S('nope')"
        ),
        GREET,
        separated=f"{CROSS}|AssertionError",
    ),
    "list_subclass_eq_and_iter": Attack(
        indent(
            "class L(list):\n    __eq__ = lambda s, o: True\n"
            "    def __iter__(self):\n        return iter([1, 2, 3])\n"
            "    def __len__(self):\n        return 3\n"
            "return L([9])"
        ),
        SORTED,
        separated=f"{CROSS}|AssertionError",
    ),
    "dict_subclass_eq_and_items": Attack(
        indent(
            "class D(dict):\n    __eq__ = lambda s, o: True\n"
            "    def items(self):\n        return [('a', 2), ('b', 1)]\n"
            "    def keys(self):\n        return ['a', 'b']\n"
            "    def __iter__(self):\n        return iter(['a', 'b'])\n"
            "    def __getitem__(self, k):\n        return {'a': 2, 'b': 1}[k]\n"
            "return D(z=0)"
        ),
        COUNT,
        separated=f"{CROSS}|AssertionError",
    ),
    # A subclass whose repr/str/int/index/format all say 5, for a serializer that trusts them.
    "int_subclass_lying_conversions": Attack(
        indent(
            "class I(int):\n    __repr__ = __str__ = lambda s: '5'\n"
            "    __int__ = __index__ = lambda s: 5\n    __format__ = lambda s, spec: '5'\n"
            "    __float__ = lambda s: 5.0\n    __reduce__ = lambda s: (int, (5,))\n"
            "return I(-1)"
        ),
        single="fail",
        separated=f"{CROSS}|AssertionError",
    ),
    "float_subclass_lying_conversions": Attack(
        indent(
            "class F(float):\n    __repr__ = __str__ = lambda s: '1.5'\n"
            "    __float__ = lambda s: 1.5\n    __reduce__ = lambda s: (float, (1.5,))\n"
            "    def hex(self):\n        return (1.5).hex()\n"
            "return F(0.0)"
        ),
        HALF_ABS,
        single="fail",
        separated=f"{CROSS}|AssertionError",
    ),
    # (7) __eq__ that raises SystemExit(0): a harness that treats exit 0 as success would pass.
    "eq_raises_system_exit": Attack(
        indent("class E:\n    def __eq__(self, other):\n        raise SystemExit(0)\nreturn E()"),
        single="fail",
        separated=CROSS,
    ),
    # (8) An object whose repr/str say 5 and whose __eq__ compares those.
    "lying_repr_object": Attack(
        indent(
            "class Five:\n    __repr__ = __str__ = lambda s: '5'\n"
            "    def __eq__(self, other):\n        return str(self) == str(other)\n"
            "return Five()"
        ),
        separated=CROSS,
    ),
    # (9) isinstance patched to say yes to everything, with an object equal to everything.
    "monkeypatch_isinstance": Attack(
        indent(YES + "return Yes()")
        + "\nimport builtins\nbuiltins.isinstance = lambda o, t: True\n",
        ADD_STRICT,
        separated=FAILED,  # isinstance is patched in the candidate's process too
    ),
    # (10) A fake `math` in sys.modules for the test's `import math`.
    "fake_math_module": Attack(
        "    return 0.0\n\nimport sys, types\n"
        "sys.modules['math'] = types.SimpleNamespace(isclose=lambda *a, **k: True)\n",
        HALF_MATH,
    ),
    # (11) Write pass-looking bytes and protocol-looking frames to every fd 0..255.
    "write_every_fd_at_import": Attack(WRONG_ADD + EVERY_FD + "_spray()\n", single="fail"),
    "write_every_fd_in_call": Attack("    _spray()\n" + WRONG_ADD + EVERY_FD, single="fail"),
    # (12) Kill the parent, every pid, and everything the uid may signal.
    "kill_parent_and_everyone": Attack(
        indent(
            """
import os, signal
for target in [os.getppid()] + list(range(1, 1000)):
    if target != os.getpid():
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
try:
    os.kill(-1, signal.SIGKILL)
except OSError:
    pass
"""
        )
        + WRONG_ADD,
        single="fail",
        disruptive=True,
    ),
    "stop_everyone": Attack(
        indent(
            """
import os, signal
for target in [os.getppid(), -1] + list(range(1, 1000)):
    if target != os.getpid():
        try:
            os.kill(target, signal.SIGSTOP)
        except OSError:
            pass
"""
        )
        + WRONG_ADD,
        single="fail",
        disruptive=True,
    ),
    # (13) Steal a nonce through /proc/<pid>/fd/* (and try /proc/<pid>/mem) of other processes,
    # forge the token into their descriptors, at import time and from inside the call.
    "proc_steal_and_forge_at_import": Attack(
        WRONG_ADD + PROC_FORGE + "_steal()\n", single="fail", disruptive=True
    ),
    "proc_steal_and_forge_in_call": Attack(
        "    _steal()\n" + WRONG_ADD + PROC_FORGE, single="fail", disruptive=True
    ),
    # (14) Values that are code.
    "return_generator": Attack("    return (x for x in [a + b])\n", single="fail", separated=CROSS),
    "return_lambda": Attack("    return lambda *args: 5\n", single="fail", separated=CROSS),
    # (15) Infinite recursion in __eq__: fails, never hangs.
    "eq_infinite_recursion": Attack(
        indent("class R:\n    def __eq__(self, other):\n        return self == other\nreturn R()"),
        single="fail",
        separated=CROSS,
    ),
    # Plain data that is hard to serialise: cycles, depth, aliasing amplification.
    "self_referential_list": Attack(
        "    x = [1, 2]\n    x.append(x)\n    return x\n", SORTED, single="fail"
    ),
    "deeply_nested_list": Attack(
        "    x = []\n    for _ in range(200000):\n        x = [x]\n    return x\n",
        SORTED,
        single="fail",
    ),
    "aliased_amplification": Attack(
        "    x = [0] * 10**6\n    return [x] * 1000\n", SORTED, single="fail"
    ),
    # (16) A huge return value.
    "huge_return": Attack("    return 'x' * 10**8\n", single="fail"),
    # Against the separated mode's own rules:
    # a class named like a plain type, ...
    "type_named_int": Attack(
        indent(
            YES + "Int = type('int', (Yes,), {'__module__': 'builtins', '__qualname__': 'int'})\n"
            "return Int()"
        ),
        separated=CROSS,
    ),
    # ... an object whose __class__ says int (isinstance(obj, int) is then True), ...
    "class_attribute_says_int": Attack(
        indent(YES + "class Fake(Yes):\n    __class__ = property(lambda s: int)\nreturn Fake()"),
        separated=f"{CROSS}|AssertionError",
    ),
    # ... a class of the completion's own named like the prompt's class, with a lying __eq__,
    "shadow_trusted_class": Attack(
        indent(
            "global Point\nclass Point:\n    def __init__(self, x, y):\n"
            "        self.x, self.y = x, y\n    __eq__ = lambda s, o: True\n"
            "return Point(0, 0)"
        ),
        POINT,
        separated=f"{CROSS}|AssertionError",
    ),
    # ... a subclass of the prompt's class with a lying __eq__, ...
    "subclass_trusted_class": Attack(
        indent("class P(Point):\n    __eq__ = lambda s, o: True\nreturn P(0, 0)"),
        POINT,
        separated=f"{CROSS}|AssertionError",
    ),
    # ... the prompt's class carrying objects equal to everything, ...
    "trusted_class_with_evil_fields": Attack(
        indent(YES + "return Point(Yes(), Yes())"), POINT, separated=PLAIN
    ),
    # ... a mutated argument that now holds objects equal to everything, ...
    "mutate_argument_into_evil": Attack(
        indent(YES + "lst[:] = [Yes(), Yes(), Yes()]"), MUTATE, separated=PLAIN
    ),
    # ... an object that would run code in the tests' process if unpickled there, ...
    "pickle_reduce_runs_code": Attack(
        indent(
            f"class R:\n    def __reduce__(self):\n        return (exec, ({EXEC_FORGE!r},))\nreturn R()"
        ),
        single="fail",
        separated=CROSS,
    ),
    # ... an exception carrying an object equal to everything (the test compares err.args), ...
    "exception_with_evil_payload": Attack(indent(YES + "raise ValueError(Yes())"), RAISES),
    # ... exceptions a harness may mishandle ...
    "raise_system_exit_0": Attack("    raise SystemExit(0)\n", single="fail"),
    "raise_keyboard_interrupt": Attack("    raise KeyboardInterrupt\n", single="fail"),
    # ... an exception whose class claims to be the one the test expects, with a lying payload.
    "exception_class_named_like_builtin": Attack(
        indent(
            YES + "E = type('ValueError', (Exception,), {'__module__': 'builtins'})\nraise E(Yes())"
        ),
        RAISES,
        single="fail",
    ),
    # ... a candidate that never serves: it exits 0, or closes every descriptor, at import.
    "exit_0_at_import": Attack(WRONG_ADD + "\nimport os\nos._exit(0)\n", single="fail"),
    "close_every_fd_at_import": Attack(
        WRONG_ADD + "\nimport os\nos.closerange(0, 256)\n", single="fail"
    ),
    # ... a result mutated by a thread while it is being sent (validated, then swapped).
    # ... a StopIteration, which ends the tests' map() early (all() of nothing is True), ...
    "stop_iteration_ends_map": Attack("    raise StopIteration\n", EVEN),
    # ... a built-in class as an attribute of the prompt's class, shadowing one of its methods
    # (r.is_square() then calls object(), which is truthy), ...
    "builtin_type_shadows_prompt_method": Attack(
        "    r = Shape(2, 3)\n    r.is_square = object\n    return r\n", SHAPE
    ),
    # ... a completion that redefines the prompt's helper the tests rely on.
    "redefine_prompt_helper": Attack(
        "    return s\n\n\ndef encode(s):\n    return s\n", CYCLIC, separated="AssertionError"
    ),
    "result_mutated_while_sent": Attack(
        indent(
            YES
            + """
import sys, threading
sys.setswitchinterval(1e-6)
r = [0, 2, 3]
def flip():
    for _ in range(10**6):
        r[0] = Yes()
        r[0] = 0
threading.Thread(target=flip, daemon=True).start()
return r
"""
        ),
        SORTED,
    ),
}


@pytest.fixture(scope="module")
def pools():
    out = {}
    configs = {
        mode: ExecutionConfig(
            workers=1, memory_mb=512, processes=32, timeout=TIMEOUT, separate_candidate=separate
        )
        for mode, separate in MODES.items()
    }
    with WorkerPool(configs["separated"]) as sep, WorkerPool(configs["single-process"]) as one:
        out["separated"], out["single-process"] = sep, one
        yield out


def judge(pool: WorkerPool, completion: str, problem: Problem, mode: str) -> dict:
    job = _job(problem, completion, TIMEOUT, separate=MODES[mode])
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    return outcome


def record(kind: str, mode: str, outcome: dict, seconds: float) -> None:
    path = os.environ.get("BOI_ADAPTIVE_REPORT")
    line = {"attack": kind, "mode": mode, "status": outcome["status"]}
    line.update(result=outcome["result"], seconds=round(seconds, 2))
    print(json.dumps(line))
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line) + "\n")


def test_at_least_twelve_adaptive_attacks():
    assert len(ATTACKS) >= 12


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(ATTACKS))
def test_adaptive_attack(pools, kind, mode):
    attack = ATTACKS[kind]
    pool = pools[mode]
    before = sandbox_processes()
    started = time.monotonic()
    outcome = judge(pool, attack.completion, attack.problem, mode)
    seconds = time.monotonic() - started
    record(kind, mode, outcome, seconds)
    assert seconds < PATIENCE, outcome
    if mode == "separated":
        assert outcome["status"] != "passed", outcome
        assert outcome["status"] in ("failed", "timed out"), outcome
        assert outcome["result"].startswith(("failed: ", "timed out")), outcome
        assert re.search(attack.separated, outcome["result"]), outcome
    elif attack.single == "fail":
        assert outcome["status"] != "passed", outcome
    assert sandbox_processes() <= before, "a sandboxed process outlived its sample"
    if attack.disruptive or mode == "separated":
        assert judge(pool, GOOD_ADD, ADD, mode)["status"] == "passed"


def test_separated_mode_reports_why_a_value_cannot_cross(pools):
    completion = indent(YES + "class _A(Yes):\n    pass\nreturn _A()")
    outcome = judge(pools["separated"], completion, ADD, "separated")
    assert outcome["status"] == "failed"
    expected = r"^failed: the candidate returned an object of type _A, which "
    assert re.search(expected + CROSS, outcome["result"]), outcome


def test_callback_argument_from_the_tests_fails_with_a_reason(pools):
    # A test that hands the candidate a function cannot be judged apart; it must say so.
    problem = _problem(
        "callback",
        "def apply(f, x):\n",
        "def check(candidate):\n    assert candidate(lambda v: v + 1, 1) == 2\n",
        "apply",
    )
    outcome = judge(pools["separated"], "    return f(x)\n", problem, "separated")
    assert outcome["status"] == "failed" and PLAIN in outcome["result"], outcome
    assert (
        judge(pools["single-process"], "    return f(x)\n", problem, "single-process")["status"]
        == "passed"
    )


# ---- honest completions -------------------------------------------------------------------

ROUNDTRIP = _problem(
    "roundtrip",
    "def shuffle(x):\n",
    r"""def check(candidate):
    import math
    x = {"list": [1, [2, (3, 4.5)]], "set": {1, 2, 3}, "bytes": b"\x00ab",
         "floats": [float("nan"), float("inf"), -float("inf"), -0.0, 1.0],
         "nested": {"k": [None, True, False, {"z": ()}]}, "text": "h\u00e9llo \u2713\x00",
         "big": 2**100, "huge": [10**5000, -(2**200)], "lone": "\ud800"}
    r = candidate(x)
    assert r["list"] == [[2, (3, 4.5)], 1] and type(r["list"][0][1]) is tuple
    assert r["tuple"] == (1, [2, (3, 4.5)]) and type(r["tuple"]) is tuple
    assert r["set"] == {1, 2, 3, 4} and type(r["set"]) is set
    assert r["frozen"] == {1, 2, 3} and type(r["frozen"]) is frozenset
    assert r["bytes"] == b"\x00ab\xff" and type(r["bytes"]) is bytes
    f = r["floats"]
    assert math.isnan(f[0]) and f[1] == math.inf and f[2] == -math.inf
    assert f[3] == 0.0 and math.copysign(1.0, f[3]) == -1.0
    assert f[4] == 2.0 and type(f[4]) is float
    assert r["keys"] == {(1, "a"): None, 2: True, 2.5: 1 + 2j, frozenset({1}): b""}
    assert type(r["keys"][2]) is bool and type(r["keys"][2.5]) is complex
    assert r["nested"] == [[x["nested"], (x["nested"],)]]
    assert r["text"] == "H\u00c9LLO \u2713\x00" and r["big"] == 2**101
    assert r["huge"] == [10**5000, -(2**200)] and r["lone"] == "\ud800"
    assert r["none"] is None and r["empty"] == ([], (), {}, set(), "", b"")
    assert x["list"] == [1, [2, (3, 4.5)]] and x["set"] == {1, 2, 3}
""",
    "shuffle",
)
ROUNDTRIP_GOOD = """    return {
        "list": x["list"][::-1],
        "tuple": tuple(x["list"]),
        "set": set(x["set"]) | {4},
        "frozen": frozenset(x["set"]),
        "bytes": x["bytes"] + b"\\xff",
        "floats": [v * 2 for v in x["floats"]],
        "keys": {(1, "a"): None, 2: True, 2.5: 1 + 2j, frozenset({1}): b""},
        "nested": [[x["nested"], (x["nested"],)]],
        "text": x["text"].upper(),
        "big": x["big"] * 2,
        "huge": x["huge"],
        "lone": x["lone"],
        "none": None,
        "empty": ([], (), {}, set(), "", b""),
    }
"""
KWARGS = _problem(
    "kwargs",
    "def scale(x, factor=2, *, offset=0):\n",
    "def check(candidate):\n    assert candidate(3) == 6\n"
    "    assert candidate(3, factor=3, offset=1) == 10\n"
    "    assert candidate(x=1, offset=-1) == 1\n"
    "    assert candidate(*[2], **{'factor': 5}) == 10\n",
    "scale",
)
EXCEPTIONS = _problem(
    "exceptions",
    "def root(x):\n",
    """def check(candidate):
    try:
        candidate(-1)
    except ValueError as err:
        assert "negative" in str(err)
    else:
        assert False
    try:
        candidate("nan")
    except Exception:
        pass
    else:
        assert False
    try:
        candidate([])
    except TypeError:
        pass
    else:
        assert False
    assert candidate(4) == 2.0
""",
    "root",
)
EXCEPTIONS_GOOD = """    class NotANumber(Exception):
        pass
    if x == "nan":
        raise NotANumber(x)
    if x < 0:
        raise ValueError("negative")
    return x ** 0.5
"""
MUTATE_ALL = _problem(
    "mutate_all",
    "def sort_in_place(lst, d, s):\n",
    "def check(candidate):\n    lst = [3, 1, 2]\n    alias = lst\n    d, s = {}, {5}\n"
    "    assert candidate(lst, d, s) is None\n"
    "    assert lst == [1, 2, 3] and alias is lst\n"
    "    assert d == {'n': 3} and s == {0, 5}\n",
    "sort_in_place",
)
MUTATE_ALL_GOOD = "    lst.sort()\n    d['n'] = len(lst)\n    s.add(0)\n"
PAIRS = _problem(
    "pairs",
    "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n\n\n"
    "def swap_all(pairs):\n",
    """def check(candidate):
    ps = [Pair(1, 2), Pair("x", [3])]
    out, first = candidate(ps)
    assert all(type(p) is Pair for p in out) and type(first) is Pair
    assert [(p.a, p.b) for p in out] == [(2, 1), ([3], "x")]
    assert (first.a, first.b) == (1, 2)
""",
    "swap_all",
)
PAIRS_GOOD = "    return [Pair(p.b, p.a) for p in pairs], pairs[0]\n"
TREE = _problem(
    "tree",
    "class Node:\n    def __init__(self, data):\n        self.data = data\n"
    "        self.left = None\n        self.right = None\n\n\ndef mirror(node):\n",
    """def check(candidate):
    root = Node(1)
    root.left = Node(2)
    root.left.left = Node(3)
    m = candidate(root)
    assert type(m) is Node and m.data == 1 and m.left is None
    assert m.right.data == 2 and m.right.right.data == 3 and m.right.left is None
""",
    "mirror",
)
TREE_GOOD = """    if node is None:
        return None
    out = Node(node.data)
    out.left, out.right = mirror(node.right), mirror(node.left)
    return out
"""
DATACLASS = _problem(
    "dataclass",
    "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass Point:\n"
    "    x: int\n    y: int\n\n\ndef flip(p):\n",
    "def check(candidate):\n    assert candidate(Point(1, 2)) == Point(2, 1)\n"
    "    assert {candidate(Point(3, 4))} == {Point(4, 3)}\n",
    "flip",
)
CHATTY = _problem(
    "chatty",
    "def counter(x):\n",
    "def check(candidate):\n    for i in range(200):\n        assert candidate(i) == i + 1\n",
    "counter",
)
CHATTY_GOOD = (
    "    import sys\n    print('debug', x)\n    print('more', x, file=sys.stderr)\n"
    "    counter.calls = getattr(counter, 'calls', 0) + 1\n    return x + 1\n"
)

HONEST = {
    "plain_data_roundtrip": (ROUNDTRIP, ROUNDTRIP_GOOD),
    "keyword_arguments": (KWARGS, "    return x * factor + offset\n"),
    "exceptions_reach_the_test": (EXCEPTIONS, EXCEPTIONS_GOOD),
    "mutated_arguments": (MUTATE_ALL, MUTATE_ALL_GOOD),
    "prompt_class_argument_and_result": (PAIRS, PAIRS_GOOD),
    "prompt_class_tree": (TREE, TREE_GOOD),
    "prompt_frozen_dataclass": (DATACLASS, "    return Point(p.y, p.x)\n"),
    "prints_and_keeps_state": (CHATTY, CHATTY_GOOD),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("kind", list(HONEST))
def test_honest_completion_passes(pools, kind, mode):
    problem, completion = HONEST[kind]
    outcome = judge(pools[mode], completion, problem, mode)
    assert outcome["status"] == "passed", outcome


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(
    "task_id", ["HumanEval/10", "HumanEval/32", "HumanEval/38", "HumanEval/50"]
)
def test_humaneval_helpers_from_the_prompt(pools, humaneval, task_id, mode):
    # The tests call helpers the prompt defines before the entry point (encode_cyclic, poly...).
    problem = next(p for p in humaneval.problems if p.task_id == task_id)
    assert judge(pools[mode], problem.canonical_solution, problem, mode)["status"] == "passed"
    wrong = judge(pools[mode], "    return None\n", problem, mode)
    assert wrong["status"] == "failed", wrong


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("task_id", ["MBPP/367", "MBPP/601", "MBPP/927"])
def test_mbpp_classes_from_the_prompt(pools, mbpp, task_id, mode):
    # Pair and Node are defined by the prompt; the tests build them and pass them in.
    problem = next(p for p in mbpp.problems if p.task_id == task_id)
    assert judge(pools[mode], problem.canonical_solution, problem, mode)["status"] == "passed"


@pytest.mark.parametrize("mode", list(MODES))
def test_summary_says_which_mode_judged(tmp_path, mode):
    config = ExecutionConfig(
        workers=1,
        memory_mb=512,
        timeout=TIMEOUT,
        calibrate=False,
        reference_timing=False,
        separate_candidate=MODES[mode],
    )
    samples = [
        {"task_id": ADD.task_id, "completion": GOOD_ADD},
        {"task_id": ADD.task_id, "completion": indent(YES + "return Yes()")},
    ]
    report = execute_samples([ADD], samples, config, tmp_path / "results.jsonl")
    assert [r["passed"] for r in report.results] == [True, mode == "single-process"]
    summary = report.summary
    places = [summary, summary.get("isolation", {}), summary.get("limits", {})]
    assert any(place.get("judging") == mode for place in places), summary
    assert summary["config"]["separate_candidate"] is MODES[mode]


def test_the_tests_process_is_out_of_the_candidates_reach(pools):
    """From inside a call, the candidate can neither read another process's memory or
    descriptors nor signal the tests' process: it reports what it could reach, and the test
    (on the trusted side) asserts that this is nothing."""
    problem = _problem(
        "reach",
        "def reach():\n",
        "def check(candidate):\n    assert candidate() == [], candidate()\n",
        "reach",
    )
    completion = indent(
        "import os, signal\n"
        "reached = []\n"
        "try:\n"
        "    me = int(os.readlink('/proc/self'))  # /proc may number processes from outside\n"
        "    pids = [int(p) for p in os.listdir('/proc') if p.isdigit()]\n"
        "except PermissionError:  # Landlock: /proc is not the sample's to read\n"
        "    me, pids = os.getpid(), []\n"
        "for pid in pids + [1, 2, 3, os.getpid() - 1, os.getpid() + 1]:\n"
        # pid 0 is the candidate's own process group (a sample may be PID 1 of its own
        # namespace, so getpid() - 1 can be 0).
        "    if pid <= 0 or pid in (me, os.getpid()):\n"
        "        continue\n"
        "    for what in ('mem', 'environ'):\n"
        "        try:\n"
        "            open(f'/proc/{pid}/{what}', 'rb').read(1)\n"
        "            reached.append((pid, what))\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        "        os.listdir(f'/proc/{pid}/fd')\n"
        "        reached.append((pid, 'fd'))\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        os.kill(pid, 0)\n"
        "        reached.append((pid, 'signal'))\n"
        "    except OSError:\n"
        "        pass\n"
        "return reached"
    )
    outcome = judge(pools["separated"], completion, problem, "separated")
    assert outcome["status"] == "passed", outcome


@pytest.mark.parametrize("mode", list(MODES))
def test_a_sample_sees_only_its_own_processes(pools, mode):
    """/proc is the worker's own PID namespace's: no machine process (nor its command line) is
    visible, only the worker's (the spawner, the jobs process), the sample and, in separated
    mode, the tests' process; under Landlock /proc is not readable at all."""
    if not pools[mode].isolation.private_proc:
        pytest.skip("this machine refused a private /proc; the isolation notes say why")
    problem = _problem(
        "procs", "def procs():\n", "def check(candidate):\n    assert candidate() <= 4\n", "procs"
    )
    completion = indent(
        "import os\ntry:\n    return len([p for p in os.listdir('/proc') if p.isdigit()])\n"
        "except PermissionError:\n    return 0"
    )
    outcome = judge(pools[mode], completion, problem, mode)
    assert outcome["status"] == "passed", outcome
