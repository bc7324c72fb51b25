"""Grid over the keyword thresholds: the worked example's droppable keywords and the mean
droppable keywords per problem on HumanEval, MBPP and the CodeContests sample.

    .venv/bin/python scripts/calibrate_keywords.py CODE_THRESHOLDS CONTEXT_THRESHOLDS TOP_NS
    .venv/bin/python scripts/calibrate_keywords.py 0.25,0.3 0.55,0.6 15,20

This is how the defaults in perturb/keywords.py were chosen (docs/explanation/blocks-and-keywords.md, "Keyword quality").
Needs ../shared/data for MBPP and CodeContests.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.loaders import load_benchmark  # noqa: E402
from benchmarks.problem import Problem  # noqa: E402
from perturb.blocks import split_blocks  # noqa: E402
from perturb.keywords import KeywordConfig, analyze_keywords, sentence_transformer_embedder  # noqa: E402

FIGURE_1 = 'def process_list(lst: list) -> int:\n    """Reverse the list and return its second item.\n    >>> process_list([1, 2, 3])\n    2\n    """\n'
DATA = ROOT.parent / "shared" / "data"


def main() -> None:
    codes, contexts, top_ns = (sys.argv[i].split(",") for i in (1, 2, 3))
    embedder = sentence_transformer_embedder("embedded")  # one cache for the whole grid
    figure = split_blocks(Problem("figure_1", "paper", FIGURE_1, "process_list"))
    datasets = {
        "humaneval": load_benchmark("humaneval").problems,
        "mbpp": load_benchmark("mbpp", DATA / "mbpp" / "mbpp.jsonl").problems,
        "code_contests": load_benchmark(
            "code_contests", DATA / "code_contests" / "code_contests_sample_train_short.jsonl"
        ).problems,
    }
    datasets = {name: [split_blocks(p) for p in problems] for name, problems in datasets.items()}
    print(
        "code  context  top_n  figure_1                 " + "  ".join(f"{n:>13}" for n in datasets)
    )
    for code in map(float, codes):
        for context in map(float, contexts):
            for top_n in map(int, top_ns):
                config = KeywordConfig(code_threshold=code, context_threshold=context, top_n=top_n)
                (fig,) = analyze_keywords([figure], config, embedder)
                means = [
                    statistics.mean(
                        len(a.droppable) for a in analyze_keywords(ps, config, embedder)
                    )
                    for ps in datasets.values()
                ]
                droppable = str([d.keyword for d in fig.droppable])
                print(
                    f"{code:<5} {context:<8} {top_n:<6} {droppable:<24} "
                    + "  ".join(f"{m:>13.2f}" for m in means)
                )


if __name__ == "__main__":
    main()
