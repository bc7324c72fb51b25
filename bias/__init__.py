"""Social bias in generated code, in two halves that share backends, sandbox and report:

- `bias.modifier_prompts`: Liu et al.'s judgmental-modifier prompts, scored by the code bias
  classifier and the demographic lexicon (`boi bias run`).
- `bias.fairness_tests`: Solar's and Huang et al.'s executable fairness tests (`boi bias test`,
  `boi bias experiment`).

Shared by both: `bias.metrics` (every bias metric, each with its paper's equation) and
`bias.completions` (completions from another harness), and the bundled data and configs below.
"""

from pathlib import Path
from typing import TypeVar

from benchmarks.common.config import from_mapping, load_yaml
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.upstream import loader_targets

T = TypeVar("T")

BUNDLED_CONFIGS = Path(__file__).parent / "configs"
"""Configs both commands resolve by name (`demo`, `paper`, `test-demo`, `exp-*`)."""


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`demo`, `paper`, `preliminary`, `test-demo`, `exp-*`) or a path,
    as a path: both commands' `--config`."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


DATA_DIR = Path(__file__).parent / "data"
"""The suites' data files: Liu's modifiers, dimensions and templates; the fairness tests'
attributes, value pools, prompt variants and mitigation strategies."""
FAIRNESS_SUITES = tuple(loader_targets("fairness suite"))
"""The fairness tests' suites (`bias.fairness_tests.tasks`), from the one table of datasets
(`benchmarks.upstream.ALL_DATASETS`); here because `bias.completions`, which serves both halves,
tells their ids apart without importing that subpackage."""


def load_data_file(cls: type[T], path: Path, what: str) -> T:
    """A data file (YAML, bundled or the user's) as `cls`; a missing one is refused naming it
    as the `what` file."""
    if not path.is_file():
        raise UserError(f"the {what} file {path} does not exist; check the path.")
    return from_mapping(cls, load_yaml(path), str(path))
