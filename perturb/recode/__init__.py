"""ReCode's perturbation families (Wang et al., ACL 2023) as registered transformations.

ReCode (amazon-science/recode) perturbs a code prompt in four families; each of its
perturbations is registered here under a `boi` name, with ReCode's own name as its
`recode_name` (the name of ReCode's released files, and of ours under `--format recode`):

- `docstring` (`perturb.recode.docstring`; ReCode's "nlaugmenter"): typos, case, whitespace,
  synonyms, inflections, tense and paraphrase of the docstring's description. Identifiers,
  literals and the examples are never touched.
- `function_name` (`perturb.recode.function_name`; ReCode's "func_name"): the function under
  test renamed consistently in the prompt, the examples and the tests.
- `syntax` (`perturb.recode.syntax`; ReCode's "natgen"): dead code, for <-> while, operand
  swap and variable renaming on the *partial code*: the prompt plus the first half of the
  canonical solution (`perturb.recode.partial`, registered as `partial_code`, the baseline
  these are measured against, as ReCode measures them against its nominal partial prompts).
- `format` (`perturb.recode.format`; ReCode's "format"): tab indent, split lines, docstring
  to comments and inserted newlines, on the partial code too.

Stochastic ones take an `rng` (`perturb.transforms.transform_rng`), so a run with
`random_seeds: 10` makes ReCode's s0..s9 and the report takes the worst case over them.
Word data (WordNet, inflection tables) is loaded by `perturb.recode.words`.
`perturb.recode.interop` reads ReCode's released files and writes ours in its layout.
"""

from __future__ import annotations

from benchmarks.loaders import DATASETS
from benchmarks.upstream import loader_targets
from perturb.recode import docstring, format, function_name, partial, syntax  # noqa: F401  (registers)
from perturb.transforms import TRANSFORMS

# ReCode's released variants (`recode_humaneval`, `recode_mbpp`, in the one table of datasets,
# benchmarks.upstream) are read by perturb.recode.interop with lineage that names our
# transformations, so they join the datasets here, where the direction allows, and not in
# benchmarks.loaders, which imports nothing above benchmarks.
for _name, _target in loader_targets("problems").items():
    if _target.startswith(f"{__name__}."):
        DATASETS.register(_name, _target)

RECODE_GROUPS = {
    "nlaugmenter": "docstring",
    "func_name": "function_name",
    "natgen": "syntax",
    "format": "format",
}
"""ReCode's recipe groups (its `config.json` RECIPES and release folders) -> our families."""


def recode_names() -> dict[str, str]:
    """ReCode's perturbation name -> our registered transformation, for every one we have."""
    return {f.recode_name: name for name, f in TRANSFORMS.items() if f.recode_name}
