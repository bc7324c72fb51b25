"""How long `make docs` takes with and without the cached transformation examples, side by side.

    python scripts/bench_docs_build.py [--out DIR]

Runs the Makefile's build command (`mkdocs build --strict --quiet`) twice into a scratch
folder: first with this code's entries removed from `$BOI_CACHE_DIR/docs/`, so the examples
are computed (the keyword embedder, the embedded SmolLM2 and WordNet load: what every build did
before the cache, and what the first build after a change to `benchmarks/` or `perturb/` still
does), then again, reading them from the cache. Prints both wall times with the machine and
its load average, which a shared machine's figures depend on.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common.cache import cache_dir

ROOT = Path(__file__).resolve().parents[1]


def build(out: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(out)]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"mkdocs build failed:\n{proc.stderr[-3000:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="site folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="boi-docs-bench-") as tmp:
        out = args.out or Path(tmp) / "site"
        for entry in cache_dir("docs").glob("transformation-examples-*.json"):
            entry.unlink()
        load = os.getloadavg()[0]
        cold = build(out)
        warm = build(out)
    cpu = platform.processor() or platform.machine()
    print(f"machine: {os.cpu_count()} CPUs ({cpu}), load average {load:.1f} at the start")
    print(f"examples computed (every build before the cache): {cold:6.1f} s")
    print(f"examples read from the cache:                     {warm:6.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
