"""A run's candidate libraries (`ExecutionConfig.candidate_libraries`): a candidate imports
exactly those installed packages (and what they need), read-only, in every tier; nothing else
of site-packages, and nothing at all without the setting."""

from __future__ import annotations

import re

import pytest

from benchmarks.common.errors import UserError
from benchmarks.execution import ExecutionConfig, WorkerPool
from benchmarks.execution._libraries import resolve_libraries
from benchmarks.execution._run import _harness_deadline, _job
from benchmarks.problem import Problem
from tests.sandbox_helpers import TIERS

pytest.importorskip("numpy")
pytest.importorskip("pandas")

# No sample here should time out: importing pandas in a fresh sandboxed interpreter takes 1-2 s
# on a quiet 2-core machine and several times that under a loaded CI, and a limit only costs a
# sample that hangs.
TIMEOUT = 30.0

# The candidate answers with what happened: "ok", or the exception's type and message.
TRY = """    import importlib, os
    try:
        exec(code, {"importlib": importlib, "os": os})
        return "ok"
    except BaseException as err:
        return f"{type(err).__name__}: {err}"
"""
PROBLEM = "def attempt(code):\n"


def attempt(pool: WorkerPool, code: str) -> str:
    """What the candidate reports running `code` (the tests check its reply is a str)."""
    test = (
        "def check(candidate):\n"
        f"    reply = candidate({code!r})\n"
        "    assert type(reply) is str\n"
        "    raise AssertionError('REPLY:' + reply)\n"
    )
    problem = Problem(
        task_id="t/lib", benchmark="test", prompt=PROBLEM, entry_point="attempt", test=test
    )
    job = _job(problem, TRY, TIMEOUT, separate=True)
    [(_, outcome)] = list(pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    assert "REPLY:" in outcome["result"], outcome
    return outcome["result"].split("REPLY:", 1)[1]


@pytest.fixture(scope="module", params=sorted(TIERS))
def numpy_pool(request):
    config = ExecutionConfig(
        workers=1, timeout=TIMEOUT, candidate_libraries=("numpy", "pandas"), **TIERS[request.param]
    )
    with WorkerPool(config) as pool:
        yield pool


def test_an_allowed_library_imports_and_runs_one_thread(numpy_pool):
    code = (
        "import numpy\n"
        "assert int(numpy.arange(10).sum()) == 45\n"
        "assert float(numpy.linalg.inv(numpy.eye(3) * 2)[0, 0]) == 0.5\n"
        "assert os.environ['OPENBLAS_NUM_THREADS'] == '1', os.environ\n"
    )
    assert attempt(numpy_pool, code) == "ok"


@pytest.mark.parametrize("name", ["pytest", "keybert", "torch", "pyarrow", "benchmarks"])
def test_nothing_else_of_site_packages_imports(numpy_pool, name):
    # Each is installed beside numpy and pandas (or not installed at all), never allowed.
    reply = attempt(numpy_pool, f"importlib.import_module({name!r})")
    # A library of the site directory is not found at all, in every tier (the path hook:
    # pandas probes for pyarrow expecting ImportError); boi's editable install is unreadable.
    expected = "PermissionError" if name == "benchmarks" else "ModuleNotFoundError"
    assert reply.startswith(expected), reply


FRAMES = """import numpy as np
import pandas as pd


def check(candidate):
    frame = pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", None]}, index=[10, 20, 30])
    out, doubled, total = candidate(frame, np.arange(4.0))
    pd.testing.assert_frame_equal(out, frame.assign(z=frame.x * 2.5))
    assert type(doubled) is np.ndarray and doubled.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert type(total) is np.float64 and total == 6.0
"""
FRAMES_PROMPT = "import numpy as np\nimport pandas as pd\n\ndef f(frame, values):\n"


@pytest.mark.parametrize(
    ("completion", "expected"),
    [
        ("    return frame.assign(z=frame.x * 2.5), values * 2, values.sum()\n", "passed"),
        # A wrong frame fails the trusted comparison.
        ("    return frame.assign(z=frame.x * 2), values * 2, values.sum()\n", "failed: .*z"),
        # An ndarray whose __eq__ always agrees never reaches the tests.
        (
            "    class Agree(np.ndarray):\n"
            "        def __eq__(self, other):\n"
            "            return True\n"
            "    return frame.assign(z=frame.x * 2.5), values.view(Agree), values.sum()\n",
            "failed: .*type Agree, which cannot cross to the tests \\(boi-plain/2\\)",
        ),
    ],
)
def test_arrays_and_frames_cross_as_data(numpy_pool, completion, expected):
    problem = Problem(
        task_id="t/frames", benchmark="test", prompt=FRAMES_PROMPT, entry_point="f", test=FRAMES
    )
    job = _job(problem, completion, TIMEOUT, separate=True)
    [(_, outcome)] = list(numpy_pool.map([(0, {**job, "id": 0}, _harness_deadline(job))]))
    assert re.match(expected, outcome["result"]), outcome


def test_the_allowed_library_cannot_be_written(numpy_pool):
    where = "os.path.dirname(importlib.import_module('numpy').__file__)"
    for code in (
        f"open(os.path.join({where}, 'planted.py'), 'w').write('x = 1')",
        f"open(os.path.join({where}, '__init__.py'), 'a').write('x = 1')",
        f"os.rename(os.path.join({where}, 'version.py'), os.path.join({where}, 'v.py'))",
    ):
        reply = attempt(numpy_pool, code)
        assert reply.startswith(("PermissionError", "OSError")), (code, reply)
    # Nor can another package be read through the allowed one's directory.
    reply = attempt(numpy_pool, f"open(os.path.join({where}, '..', 'pytest', '__init__.py'))")
    assert reply.startswith(("PermissionError", "FileNotFoundError")), reply


def test_without_the_setting_no_library_imports():
    with WorkerPool(ExecutionConfig(workers=1, timeout=TIMEOUT)) as pool:
        reply = attempt(pool, "import numpy")
    assert reply.startswith(("ModuleNotFoundError", "PermissionError")), reply


def test_libraries_resolve_with_what_they_require():
    pytest.importorskip("pandas")
    found = resolve_libraries(("pandas",))
    assert {"pandas", "numpy"} <= set(found.versions)
    [entries] = found.reveal.values()
    assert {"pandas", "numpy"} <= set(entries)
    assert not any(e.startswith(("torch", "boi", "keybert", "pytest")) for e in entries)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("json", "standard library"),
        ("no_such_library_here", "not installed"),
        ("benchmarks", "boi itself"),
    ],
)
def test_a_library_that_cannot_be_revealed_is_refused(name, says):
    with pytest.raises(UserError, match=says):
        resolve_libraries((name,))
    with pytest.raises(UserError, match="no module name"):
        ExecutionConfig(candidate_libraries=("numpy pandas",))
