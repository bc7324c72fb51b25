"""How often our ReCode transformations make ReCode's released prompts, byte for byte.

For every registered transformation with a ReCode name whose counterpart is deterministic (not
stochastic: the format ones but new_lines, func_camel_case, the deterministic natgen ones) and
for partial_code (against ReCode's nominal partial file), compare our HumanEval and MBPP prompts
with ReCode's released s0 files and print, per transformation and dataset, how many agree out
of the records compared, and the first task that differs (with the reason where ours did not
apply). Where ours does not apply, the prompt compared is the one the catalogue would emit
unchanged (the problem itself).

    .venv/bin/python scripts/recode_agreement.py [--recode DIR] [--mbpp FILE] [--only NAME ...]

DIR: ReCode's repository (a bare git mirror is read with `git show`), its `dataset-release`
folder, or a folder `boi perturb --format recode` wrote. Default: the mirror at
/work/.mirror/amazon-science+recode/repo when present. Note: ReCode's MBPP prompts are not ours
(its mbpp_wtest.jsonl is MBXP's tab-indented form), so MBPP agreement is expected to be nil;
natgen's released prompts went through `black`, which ours do not.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.loaders import load_benchmark  # noqa: E402
from benchmarks.loaders.recode import partial_file, perturbed_file  # noqa: E402
from benchmarks.problem import Problem  # noqa: E402
from perturb.blocks import split_blocks  # noqa: E402
from perturb.recode import RECODE_GROUPS  # noqa: E402
from perturb.transforms import TRANSFORMS, NotApplicable, get_transform  # noqa: E402

MIRROR = Path("/work/.mirror/amazon-science+recode/repo")
MBPP = ROOT.parent / "shared" / "data" / "mbpp" / "mbpp.jsonl"
FAMILY_GROUPS = {family: group for group, family in RECODE_GROUPS.items()}


def read_release(root: Path, relative: PurePosixPath) -> dict[str, dict[str, Any]] | None:
    """ReCode's records of the release file `relative` by task id, or None when absent."""
    text: str | None = None
    if (root / "HEAD").is_file() and (root / "objects").is_dir():  # a bare git repository
        shown = subprocess.run(
            ["git", "-C", str(root), "show", f"HEAD:dataset-release/{relative}"],
            capture_output=True,
            text=True,
        )
        text = shown.stdout if shown.returncode == 0 else None
    else:
        for base in (root / "dataset-release", root):
            if (base / relative).is_file():
                text = (base / relative).read_text(encoding="utf-8")
                break
    if text is None:
        return None
    records = (json.loads(line) for line in text.splitlines() if line.strip())
    return {r["task_id"]: r for r in records}


def compared_names() -> list[str]:
    """partial_code, and every deterministic transformation with a ReCode name."""
    names = [n for n, f in TRANSFORMS.items() if f.recode_name and not f.stochastic]
    return (["partial_code"] if "partial_code" in TRANSFORMS else []) + names


def our_prompt(name: str, problem: Problem) -> tuple[str, str | None]:
    """Our prompt for `problem` under `name` (the problem's own where it does not apply), and
    the reason it did not apply."""
    outcome = get_transform(name)(problem)
    if isinstance(outcome, NotApplicable):
        return problem.prompt, outcome.reason
    return outcome[0].prompt, None


def agreement(name: str, dataset: str, problems: list[Problem], root: Path) -> str:
    factory = TRANSFORMS[name]
    if name == "partial_code":
        relative = partial_file(dataset)
    else:
        group = FAMILY_GROUPS.get(factory.family or "", factory.family or "")
        relative = perturbed_file(dataset, group, factory.recode_name or name, 0)
    release = read_release(root, relative)
    label = f"{name} ({factory.recode_name or 'nominal partial'}) {dataset}"
    if release is None:
        return f"{label}: no {relative} in {root}"
    equal, total, first = 0, 0, ""
    for problem in problems:
        record = release.get(problem.task_id)
        if record is None:
            continue
        total += 1
        prompt, reason = our_prompt(name, problem)
        if prompt == record["prompt"]:
            equal += 1
        elif not first:
            first = f"; first differing: {problem.task_id}" + (
                f" (ours does not apply: {reason})" if reason else ""
            )
    return f"{label}: {equal}/{total}{first}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--recode",
        type=Path,
        default=MIRROR if MIRROR.exists() else None,
        help="ReCode's repository, its dataset-release folder, or one boi wrote (default: the mirror)",
    )
    parser.add_argument("--mbpp", type=Path, default=MBPP, help="MBPP jsonl (skipped if absent)")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="compare only these transformations (e.g. the format family; doc_paraphrase runs "
        "a model and is slow)",
    )
    args = parser.parse_args(argv)
    if args.recode is None or not args.recode.exists():
        print("No ReCode release: pass --recode DIR (its repository or dataset-release folder).")
        return 2
    datasets: dict[str, list[Problem]] = {
        "humaneval": [split_blocks(p) for p in load_benchmark("humaneval").problems]
    }
    if args.mbpp.exists():
        datasets["mbpp"] = [split_blocks(p) for p in load_benchmark("mbpp", args.mbpp).problems]
    names = compared_names()
    unknown = sorted(set(args.only or ()) - set(names))
    if unknown:
        print(
            f"Not compared (no deterministic ReCode counterpart): {unknown}; choose from {names}."
        )
        return 2
    for name in args.only or names:
        for dataset, problems in datasets.items():
            print(agreement(name, dataset, problems, args.recode))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
