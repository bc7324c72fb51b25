"""LiveCodeBench (issue 45): synthetic release files in upstream's format, hostile ones refused
in one sentence with nothing run, the statement's blocks, Drop Ex and Drop Constraints, and a
release judged end to end by `boi run` (stdin and functional, a release window, dry run,
shards and merge, resume)."""

from __future__ import annotations

import base64
import json
import pickle
import pickletools
import zlib
from pathlib import Path

import pytest

from benchmarks.common.errors import UserError
from benchmarks.loaders import livecodebench as lcb
from benchmarks.loaders import load_benchmark
from benchmarks.study import Shard, run_study
from boi.cli import main
from boi.runner import RobustnessStudy, load_run_config
from boi.studies import merge_runs
from perturb.blocks import split_blocks
from perturb.transforms import NotApplicable, get_transform
from tests.livecodebench_helpers import SOLUTIONS, pack, records, write_release


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_release(tmp_path / "test.jsonl")


def test_a_release_file_loads_stdin_and_functional_problems(release):
    problems = {p.task_id: p for p in load_benchmark("livecodebench", release).problems}
    atcoder, leetcode = problems["LiveCodeBench/abc900_a"], problems["LiveCodeBench/9100"]
    assert (
        atcoder.is_stdio
        and [t.split for t in atcoder.stdio_tests] == ["public"] * 2 + ["private"] * 2
    )
    assert atcoder.stdio_tests[2].input == "4\n2 2 2 3\n"  # unpacked from the pickle
    assert atcoder.metadata["contest_date"] == "2023-06-10"
    assert leetcode.entry_point == "Solution.largestDifference"
    assert leetcode.prompt.endswith("    def largestDifference(self, nums: List[int]) -> int:\n")
    assert "[[[7, 7, 1, 9]], 8]" in leetcode.test  # the private case, in the check
    # The functional check calls a new Solution each time, in one process too.
    namespace: dict = {}
    exec(leetcode.program(SOLUTIONS["LiveCodeBench/9100"]), namespace)
    with pytest.raises(AssertionError):
        exec(leetcode.program("        return 0\n"), {})


def test_the_statement_splits_into_its_sections_and_both_drops_apply(release):
    problems = [split_blocks(p) for p in load_benchmark("livecodebench", release).problems]
    kinds = {p.task_id: [b.kind for b in p.blocks or ()] for p in problems}
    assert kinds == {
        "LiveCodeBench/abc900_a": [
            "prefix", "description", "constraints", "io_spec", "examples", "suffix",
        ],
        "LiveCodeBench/9001A": ["prefix", "description", "io_spec", "examples", "notes", "suffix"],
        "LiveCodeBench/9100": [
            "prefix", "description", "examples", "constraints", "suffix", "name",
        ],
    }  # fmt: skip
    for problem in problems:
        assert "".join(b.text for b in problem.blocks or ()) == problem.prompt
    leetcode = problems[2]
    dropped = get_transform("drop_constraints")(leetcode)
    assert not isinstance(dropped, NotApplicable)
    variant = dropped[0]
    assert "Constraints" not in variant.prompt and "Example 1" in variant.prompt
    assert variant.lineage[-1].transform == "drop_constraints"
    assert variant.lineage[-1].changes["removed"][0]["texts"][0].startswith("Constraints:")
    (no_examples,) = get_transform("drop_examples")(leetcode)  # type: ignore[misc]
    assert "Example 1" not in no_examples.prompt and "Constraints:" in no_examples.prompt
    assert get_transform("drop_constraints")(problems[1]) == NotApplicable(
        "the problem has no constraints"
    )
    # Anonymize says why it leaves the method alone (it said the code did not tokenize).
    assert get_transform("anonymize")(leetcode) == NotApplicable(
        "the function under test is a method (Solution.largestDifference); renaming a class's "
        "method is not supported yet"
    )


# --- hostile release files: each one sentence naming file, line and field; nothing runs ----


class _Runs:
    """Unpickling this writes a file: proof, if the file appears, that the loader ran it."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


class _Huge:
    """Unpickling this asks for a terabyte."""

    def __reduce__(self) -> tuple:
        return (bytearray, (1 << 40,))


def _hostile(tmp_path: Path, private: str) -> Path:
    rows = records()
    rows[1]["private_test_cases"] = private
    return write_release(tmp_path / "hostile.jsonl", rows)


def _refusal(path: Path, monkeypatch) -> str:
    # Nothing may unpickle: were it tried, these would say so.
    def never(*args, **kwargs):
        raise AssertionError("the loader unpickled")

    monkeypatch.setattr(pickle, "loads", never)
    monkeypatch.setattr(pickle, "Unpickler", never)
    with pytest.raises(UserError) as caught:
        load_benchmark("livecodebench", path)
    message = str(caught.value)
    assert f"{path} line 2: field 'private_test_cases'" in message and "\n" not in message
    return message


def test_a_pickle_that_would_run_code_is_refused_and_nothing_runs(tmp_path, monkeypatch):
    marker = tmp_path / "ran"
    pickled = pickle.dumps([_Runs(marker)])
    assert any(op.name == "REDUCE" for op, _, _ in pickletools.genops(pickled))
    message = _refusal(_hostile(tmp_path, pack([_Runs(marker)])), monkeypatch)
    assert "opcode" in message and "never loaded" in message
    assert not marker.exists()


def test_pickles_that_would_exhaust_memory_are_refused(tmp_path, monkeypatch):
    assert "opcode" in _refusal(_hostile(tmp_path, pack(_Huge())), monkeypatch)
    # A string opcode that claims 2**62 bytes it does not hold.
    claims = b"\x80\x04\x8d" + (1 << 62).to_bytes(8, "little") + b"[]" + b"."
    text = base64.b64encode(zlib.compress(claims)).decode()
    assert "does not parse" in _refusal(_hostile(tmp_path, text), monkeypatch)


def test_a_zlib_bomb_is_refused_at_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(lcb, "MAX_DECOMPRESSED_BYTES", 1 << 20)
    monkeypatch.setattr(lcb.decode_tests_text, "__defaults__", (1 << 20,))
    bomb = base64.b64encode(zlib.compress(b"\0" * (8 << 20), 9)).decode()
    assert len(bomb) < 20_000
    assert "decompresses to more than 1,048,576 bytes" in _refusal(
        _hostile(tmp_path, bomb), monkeypatch
    )


@pytest.mark.parametrize(
    ("private", "says"),
    [
        ("!!not base64!!", "neither a JSON list nor base64"),
        (base64.b64encode(b"garbage, not zlib").decode(), "is not zlib data"),
        (pack(json.dumps([]))[:-12], "zlib data that ends before"),
        (
            base64.b64encode(zlib.compress(pickle.dumps("[]")[:-3])).decode(),
            "does not parse",
        ),
        (pack(json.dumps([{"input": "1"}])), "test 0 is not an object"),
        (pack("{not json"), "is not a JSON list of tests"),
    ],
)
def test_a_torn_or_garbled_field_is_one_sentence(tmp_path, monkeypatch, private, says):
    assert says in _refusal(_hostile(tmp_path, private), monkeypatch)


def test_too_many_or_too_large_tests_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(lcb, "MAX_TESTS", 3)
    many = pack(json.dumps([{"input": "L\n", "output": "-1\n", "testtype": "stdin"}] * 4))
    assert "holds 4 tests, more than the 3 allowed" in _refusal(
        _hostile(tmp_path, many), monkeypatch
    )
    monkeypatch.setattr(lcb, "MAX_TEST_BYTES", 100)
    large = pack(json.dumps([{"input": "L" * 200, "output": "-200", "testtype": "stdin"}]))
    assert "test 0 is 204 characters" in _refusal(_hostile(tmp_path, large), monkeypatch)


def test_the_cli_refuses_a_hostile_file_in_one_sentence(tmp_path, capsys):
    path = _hostile(tmp_path, pack(_Huge()))
    assert main(["blocks", "livecodebench", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "field 'private_test_cases'" in err


def test_a_release_name_offline_says_where_to_get_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        UserError, match=r"release_v2 could not be fetched .*test.jsonl, test2.jsonl"
    ):
        load_benchmark("livecodebench", "release_v2")
    assert lcb.release_files("v3") == ["test3.jsonl"]
    with pytest.raises(UserError, match="no release 'release_v9'"):
        lcb.release_files("release_v9")


# --- boi run end to end -------------------------------------------------------------------


def _completions(path: Path, after: str = "") -> Path:
    """Right answers for every variant (of the problems released after `after`), except a
    wrong one for the functional problem without its examples (so the table shows a drop)."""
    lines = []
    dates = {f"LiveCodeBench/{r['question_id']}": r["contest_date"] for r in records()}
    for task_id, solution in SOLUTIONS.items():
        if dates[task_id] <= after:
            continue
        for suffix in ("", "::drop_examples", "::drop_constraints"):
            wrong = task_id.endswith("9100") and suffix == "::drop_examples"
            completion = "        return 0\n" if wrong else solution
            lines.append({"task_id": task_id + suffix, "completion": completion})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _config(tmp_path: Path, release: Path, out: str) -> Path:
    config = {
        "datasets": [{"name": "livecodebench", "data": str(release)}],
        "transforms": ["original", "drop_examples", "drop_constraints"],
        "name_only_probe": False,
        "settings": [{"label": "given", "ks": [1], "decoding": {"temperature": 0, "n": 1}}],
        "seeds": [0],
        "bootstrap": 0,
        "execution": {"calibrate": False},
        "out_dir": str(tmp_path / out),
    }
    path = tmp_path / f"{out}.json"
    path.write_text(json.dumps(config))
    return path


def _passed(out: Path) -> dict[str, bool]:
    (results,) = (out / "results").glob("completions-*/given.jsonl")
    return {r["task_id"]: r["passed"] for r in map(json.loads, results.open())}


def test_boi_run_judges_a_release_end_to_end(tmp_path, release, capsys):
    completions = _completions(tmp_path / "completions.jsonl")
    config = _config(tmp_path, release, "run")
    late = _completions(tmp_path / "late.jsonl", after="2023-12-31")
    argv = ["run", "--config", str(config), "--completions", str(late)]
    window = [
        "--dataset",
        "livecodebench",
        "--data",
        str(release),
        "--released-after",
        "2023-12-31",
    ]
    assert main([*argv, *window, "--dry-run"]) == 0
    assert "samples: 6 requested" in capsys.readouterr().out  # 2 problems x 3 transformations
    assert not (tmp_path / "run").exists()

    assert main([*argv, *window]) == 0
    passed = _passed(tmp_path / "run")
    assert passed["LiveCodeBench/9100"] and passed["LiveCodeBench/9001A"]  # functional, stdin
    assert not passed["LiveCodeBench/9100::drop_examples"]  # the wrong answer fails
    assert passed["LiveCodeBench/9100::drop_constraints"]
    assert not any(t.startswith("LiveCodeBench/abc900_a") for t in passed)  # released before
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["datasets"][0]["released_after"] == "2023-12-31"
    capsys.readouterr()
    # Run again: it resumes, and takes its samples from the run's cache.
    assert main([*argv, *window]) == 0
    assert _passed(tmp_path / "run") == passed
    assert "0 read from the given completions (5 from cache)" in capsys.readouterr().out

    # Shards merge into the whole run's table (the whole release this time).
    whole_config = _config(tmp_path, release, "whole")
    whole = run_study(RobustnessStudy(_load(whole_config, completions)), log=print)
    shards = []
    for index in range(2):
        out = tmp_path / f"shard{index}"
        study = RobustnessStudy(_load(_config(tmp_path, release, f"shard{index}"), completions))
        run_study(study, shard=Shard(index, 2), log=print)
        shards.append(out)
    # The report split at a cut-off date: each effect on the problems before it and from it.
    capsys.readouterr()
    assert main(["report", str(whole.out_dir), "--released-split", "2024-01-01"]) == 0
    split = whole.out_dir / "report-released-2024-01-01" / "table.md"
    assert split.is_file() and (whole.out_dir / "report" / "table.md").is_file()
    table = split.read_text()
    assert "livecodebench before 2024-01-01" in table and "livecodebench from 2024-01-01" in table
    # Drop Ex costs the problems from the cut-off half their passes, the one before none.
    assert "### livecodebench from 2024-01-01" in table and "### livecodebench before" in table
    assert "| 1 | Drop Ex | -25.0% | -50.0% | +0.0% |" in table
    merged = merge_runs(tmp_path / "merged", shards, print)
    table = "table.json"
    assert (merged.out_dir / "report" / table).read_text() == (
        whole.out_dir / "report" / table
    ).read_text().replace(str(tmp_path / "run"), str(tmp_path / "merged"))


def _load(config: Path, completions: Path):
    data = json.loads(config.read_text())
    data["models"] = [{"kind": "completions", "model": str(completions)}]
    return load_run_config(None, data)


def test_a_release_window_without_dates_or_outside_them_is_one_sentence(tmp_path, release):
    with pytest.raises(
        UserError, match=r"released_after is .2024-13-01.; give a date as YYYY-MM-DD"
    ):
        load_run_config(
            None, {"datasets": [{"name": "livecodebench", "released_after": "2024-13-01"}]}
        )
    config = {"datasets": [{"name": "humaneval", "released_after": "2024-01-01"}]}
    from boi.runner.stages import load_datasets

    with pytest.raises(UserError, match="HumanEval/0 has no contest date"):
        load_datasets(load_run_config(None, config))
    late = {
        "datasets": [
            {"name": "livecodebench", "data": str(release), "released_after": "2030-01-01"}
        ]
    }
    with pytest.raises(UserError, match="from 2023-06-10 to 2024-05-04"):
        load_datasets(load_run_config(None, late))


def test_boi_data_list_names_livecodebench_and_where_it_is_read_from(tmp_path, capsys):
    assert main(["data", "list", "--dir", str(tmp_path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("livecodebench:"))
    assert "livecodebench/code_generation_lite" in line and "--data release_vN" in line


def test_a_chat_reply_is_read_for_both_kinds(release):
    """What a chat model writes (the whole class; a whole program) is read into a completion
    of the prompt that passes: the functional one with its method's body."""
    from benchmarks.generation.replies import read_completion_reply

    problems = {p.task_id: p for p in load_benchmark("livecodebench", release).problems}
    leetcode, codeforces = problems["LiveCodeBench/9100"], problems["LiveCodeBench/9001A"]
    method = (
        "class Solution:\n    def largestDifference(self, nums: List[int]) -> int:\n"
        "        return max([0] + [b - a for i, a in enumerate(nums) for b in nums[i + 1 :]])\n"
    )
    reading = read_completion_reply(f"Sure:\n```python\n{method}```\n", leetcode.prompt, chat=True)
    assert reading.status == "extracted" and reading.completion.startswith("        return max(")
    exec(leetcode.program(reading.completion), {})  # passes: check() raises on a wrong answer
    program = "import sys\ns = sys.stdin.readline()\nprint(s.count('R') - s.count('L'))\n"
    reading = read_completion_reply(f"```python\n{program}```", codeforces.prompt, chat=True)
    assert reading.completion == program


def test_release_files_are_recorded_by_digest_and_checked_against_the_published_ones(
    tmp_path, monkeypatch
):
    import huggingface_hub

    from benchmarks.common.provenance import file_sha256

    release = write_release(tmp_path / "test2.jsonl")  # a release file's name, not its content
    loaded = load_benchmark("livecodebench", release)
    digest = file_sha256(release)
    assert {p.metadata["release_sha256"] for p in loaded.problems} == {digest}
    (issue,) = loaded.issues  # a local file is loaded as given, and said to differ
    assert issue.task_id == str(release) and "not upstream's published test2.jsonl" in issue.reason

    # From the hub, a file that is not the published one is refused.
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", lambda repo, name, **kw: str(release))
    with pytest.raises(UserError, match=r"the hub's test2.jsonl .* upstream changed it"):
        load_benchmark("livecodebench", "v2")
    monkeypatch.setitem(lcb.PUBLISHED_SHA256, "test2.jsonl", digest)
    assert not load_benchmark("livecodebench", "v2").issues


@pytest.mark.parametrize("separate", [True, False], ids=["separated", "single-process"])
def test_a_method_is_judged_in_the_sandbox_on_a_new_instance_per_test(release, tmp_path, separate):
    """Both judging modes call Solution.METHOD on a new Solution() for each test, as LeetCode
    does: a solution that keeps its first answer on the instance passes only so."""
    from benchmarks.execution import ExecutionConfig, execute_samples

    problems = [p for p in load_benchmark("livecodebench", release).problems if not p.is_stdio]
    keeps_first = (  # right on a fresh instance, wrong from the second test on a shared one
        "        if not hasattr(self, 'first'):\n"
        "            self.first = max(0, max(b - a for i, a in enumerate(nums) for b in nums[i + 1 :]))\n"
        "        return self.first\n"
    )
    samples = [
        {"task_id": "LiveCodeBench/9100", "completion": SOLUTIONS["LiveCodeBench/9100"]},
        {"task_id": "LiveCodeBench/9100", "completion": "        return max(nums) - min(nums)\n"},
        {"task_id": "LiveCodeBench/9100", "completion": keeps_first},
    ]
    # No sample here may time out: a generous limit, so a loaded machine cannot turn a verdict
    # into a timeout (2 s could be): 9 s against some 50 ms.
    config = ExecutionConfig(
        timeout=9.0, calibrate=False, reference_timing=False, workers=1, separate_candidate=separate
    )
    out = tmp_path / "results.jsonl"
    execute_samples(problems, samples, config, out)
    assert [json.loads(line)["passed"] for line in out.open()] == [True, False, True]
