"""BigCodeBench's tiers on this machine, counted: how many tasks each tier holds (computed by the
loader from every task's imports and what imports here, `benchmarks.loaders.bigcodebench`), and
for the installed tier which libraries its tasks need, how many need no plotting library, and
how many need numpy and/or pandas alone: the figures docs/how-to/bigcodebench.md gives for the
tier a run cannot judge yet.

    python scripts/bigcodebench_tiers.py [data/bigcodebench/BigCodeBench.jsonl.gz]

The installed tier depends on the environment (a library installed or not moves tasks between
installed and unavailable), so the figures are this environment's.
"""

from __future__ import annotations

import sys
from collections import Counter

from benchmarks.loaders.bigcodebench import TIERS, load_bigcodebench_all

PLOTTING = {"matplotlib", "seaborn", "mpl_toolkits"}


def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "data/bigcodebench/BigCodeBench.jsonl.gz"
    problems = load_bigcodebench_all(path).problems
    tiers = Counter(p.metadata["tier"] for p in problems)
    print(f"{len(problems)} tasks: " + ", ".join(f"{tier} {tiers[tier]}" for tier in TIERS))
    installed = [p for p in problems if p.metadata["tier"] == "installed"]
    outside = [
        {m for m in p.metadata["modules"] if m not in sys.stdlib_module_names} for p in installed
    ]
    libraries = Counter(m for modules in outside for m in modules)
    print(
        "installed tier, tasks per library: "
        + ", ".join(f"{m} {n}" for m, n in libraries.most_common())
    )
    print(
        f"  without a plotting library ({', '.join(sorted(PLOTTING))}): {sum(not (m & PLOTTING) for m in outside)}"
    )
    print(f"  numpy and/or pandas alone: {sum(m <= {'numpy', 'pandas'} for m in outside)}")


if __name__ == "__main__":
    main()
