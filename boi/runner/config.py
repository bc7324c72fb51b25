"""`boi run`'s config: its types (datasets, decoding settings, the critic, `RunConfig`), the
bundled configs and loading, and the run's identity (the hashes its directory is claimed by)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from benchmarks.common.config import from_mapping, load_yaml, to_dict
from benchmarks.common.config import resolve_config_path as resolve_bundled
from benchmarks.common.errors import UserError
from benchmarks.common.provenance import file_sha256, portable_config
from benchmarks.execution import ExecutionConfig
from benchmarks.generation import BackendSpec, DecodingConfig, backend_class
from benchmarks.loaders import dataset_help
from benchmarks.study import identity_hashes
from critic.spec import CriticSpec
from perturb.catalogue import PerturbConfig

__all__ = [
    "BUNDLED_CONFIGS",
    "FLAT_PERTURB_KEYS",
    "CriticSpec",
    "DatasetSpec",
    "RunConfig",
    "SettingSpec",
    "load_run_config",
    "resolve_config_path",
    "run_hash",
    "run_identity",
    "with_overrides",
    "work_hash",
]


def _iso_date(value: str | None, key: str) -> str | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise UserError(
            f"datasets[].{key} is {value!r}; give a date as YYYY-MM-DD, e.g. 2024-06-01."
        ) from None


@dataclass(frozen=True)
class DatasetSpec:
    name: str = field(
        default="humaneval",
        metadata={"help": dataset_help()},
    )
    data: str | None = field(
        default=None,
        metadata={
            "help": "where to read the named dataset from (MBPP JSONL, CodeContests JSONL/Parquet)"
        },
    )
    task_ids: tuple[str, ...] = field(
        default=(), metadata={"help": "only these problems (empty: all)"}
    )
    limit: int | None = field(
        default=None, metadata={"help": "only the first N problems (after task_ids)"}
    )
    released_after: str | None = field(
        default=None,
        metadata={
            "help": "only problems whose contest date is after this date (YYYY-MM-DD), e.g. a "
            "model's training cut-off (LiveCodeBench; before task_ids and limit)"
        },
    )
    released_before: str | None = field(
        default=None,
        metadata={
            "help": "only problems whose contest date is before this date (YYYY-MM-DD) "
            "(LiveCodeBench; before task_ids and limit)"
        },
    )

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise UserError(
                f"datasets[].limit is {self.limit}; use a positive number or leave it out."
            )
        after, before = (
            _iso_date(self.released_after, "released_after"),
            _iso_date(self.released_before, "released_before"),
        )
        # Compared as text with a problem's YYYY-MM-DD, so kept in that form.
        object.__setattr__(self, "released_after", after)
        object.__setattr__(self, "released_before", before)
        if after and before and after >= before:
            raise UserError(
                f"datasets[].released_after {after} is not before released_before {before}; "
                "the window would hold no problem."
            )

    def released(self, contest_date: str) -> bool:
        """Whether a problem of this contest date (YYYY-MM-DD) is inside the release window."""
        return (not self.released_after or contest_date > self.released_after) and (
            not self.released_before or contest_date < self.released_before
        )

    @property
    def label(self) -> str:
        return (
            Path(self.name).stem
            if ("/" in self.name or self.name.endswith(".jsonl"))
            else self.name
        )


@dataclass(frozen=True)
class SettingSpec:
    """One decoding setting and the pass@k reported for it."""

    label: str = field(
        default="T=0.2", metadata={"help": "the setting's name in tables and results paths"}
    )
    ks: tuple[int, ...] = field(
        default=(1,), metadata={"help": "pass@k reported for this setting (k <= samples)"}
    )
    decoding: DecodingConfig = field(
        default_factory=DecodingConfig, metadata={"help": "temperature, top-p, n, stops, chat"}
    )

    def __post_init__(self) -> None:
        if not self.ks or any(k < 1 for k in self.ks):
            raise UserError(
                f"settings[{self.label}].ks is {list(self.ks)}; give positive k values such as [1, 100]."
            )


def _paper_settings() -> list[SettingSpec]:
    return [
        SettingSpec("T=0.2", (1,), DecodingConfig(temperature=0.2, top_p=0.95, n=10)),
        SettingSpec("T=0.8", (1, 100), DecodingConfig(temperature=0.8, top_p=0.95, n=100)),
    ]


@dataclass(frozen=True)
class RunConfig:
    """Everything `boi run` does; loadable from YAML (`--config`), overridable by flags."""

    out_dir: str = field(default="runs/default", metadata={"help": "the run directory"})
    datasets: list[DatasetSpec] = field(default_factory=lambda: [DatasetSpec()])
    perturb: PerturbConfig = field(
        default_factory=PerturbConfig,
        metadata={
            "help": "the perturbation stage: transforms, anonymous_name, seed, keywords, "
            "keep_unchanged, params, random_seeds, keyword_file (`boi perturb`'s config; the "
            "name-only probe is added to its transforms when name_only_probe is on)"
        },
    )
    models: list[BackendSpec] = field(
        default_factory=lambda: [BackendSpec(kind="hf", model="embedded")]
    )
    settings: list[SettingSpec] = field(
        default_factory=_paper_settings,
        metadata={"help": "paper protocol: pass@1 at T=0.2, pass@100 at T=0.8 (top-p 0.95)"},
    )
    seeds: tuple[int, ...] = field(
        default=tuple(range(10)),
        metadata={
            "help": "each setting is sampled once per seed; samples of all seeds are pooled (paper: 10 seeds)"
        },
    )
    name_only_probe: bool = field(
        default=True,
        metadata={"help": "also generate from the name block alone (paper appendix 10.8)"},
    )
    critic: CriticSpec = field(default_factory=CriticSpec)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    bootstrap: int = field(
        default=1000,
        metadata={"help": "bootstrap resamples for the confidence intervals of relative drops"},
    )
    bootstrap_seed: int = field(
        default=0,
        metadata={
            "help": "seed of the report's bootstrap resamples (a config from before this option "
            "has perturb_seed and reads it as this too, so its report keeps its numbers)"
        },
    )

    def __post_init__(self) -> None:
        if "original" not in self.perturb.transforms:
            # Caught here, not after generating everything: the report measures every drop
            # against Original on the same problems.
            raise UserError(
                f"perturb.transforms {list(self.perturb.transforms)} lack 'original'; add it, "
                "drops are measured "
                "against it."
            )
        if self.bootstrap < 0:
            # Caught with the config, not by the report after generation and execution.
            raise UserError(
                f"bootstrap is {self.bootstrap}; use 0 for no confidence intervals or a "
                "positive number of resamples, e.g. 1000."
            )
        if not self.datasets or not self.models or not self.settings or not self.seeds:
            raise UserError("the run needs at least one dataset, model, setting and seed.")
        labels = [s.label for s in self.settings]
        if len(set(labels)) != len(labels):
            raise UserError(f"settings labels {labels} repeat; give each setting its own label.")
        if len(set(self.seeds)) != len(self.seeds):
            raise UserError(f"seeds {list(self.seeds)} repeat; list each once.")
        # Results, caches and table columns are keyed by the model's label: two models under
        # one label would mix their samples.
        model_labels = [m.label for m in self.models]
        repeated = sorted({label for label in model_labels if model_labels.count(label) > 1})
        if repeated:
            raise UserError(
                f"models share the label {repeated[0]!r}; give each model a distinct name or "
                "folder (the label is the backend kind and the model's last path part)."
            )
        for setting in self.settings:
            n = setting.decoding.n * len(self.seeds)
            too_big = [k for k in setting.ks if k > n]
            if too_big:
                raise UserError(
                    f"setting {setting.label}: k={too_big[0]} exceeds the {n} samples per problem (n={setting.decoding.n} x {len(self.seeds)} seeds); raise decoding.n or lower ks."
                )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = to_dict(self)
        return data

    def flat_json(self) -> dict[str, Any]:
        """The config in the shape run directories recorded before `perturb` nested (its
        fields at the top level, `seed` as perturb_seed, `params` as transform_params, no
        bootstrap_seed where it is the perturbation seed, as it was then): what their hashes
        are of, so the identity stays theirs (`run_identity`)."""
        data = self.to_json()
        perturb = data.pop("perturb")
        bootstrap_seed = data.pop("bootstrap_seed")
        for key, flat in FLAT_PERTURB_KEYS.items():
            data[flat] = perturb[key]
        if bootstrap_seed != self.perturb.seed:
            data["bootstrap_seed"] = bootstrap_seed
        return data

    @classmethod
    def upgrade_mapping(cls, data: Mapping[str, Any], where: str) -> dict[str, Any]:
        """A config mapping written before `perturb` nested (a run directory's manifest, an
        older YAML file: `transforms`, `perturb_seed`, ... at the top level) in today's shape;
        today's passes unchanged (`benchmarks.common.config.from_mapping` calls this). The
        report's bootstrap was seeded by perturb_seed then, so such a config without
        bootstrap_seed takes that seed for it: its report keeps its numbers."""
        upgraded = dict(data)
        nested = upgraded.get("perturb")
        perturb = dict(nested) if isinstance(nested, Mapping) else None
        moved: dict[str, Any] = {}
        for key, flat in FLAT_PERTURB_KEYS.items():
            if flat not in upgraded:
                continue
            if perturb is not None and key in perturb:
                raise UserError(
                    f"{where} gives both {flat} and perturb.{key}; keep perturb.{key} "
                    f"({flat} is its older spelling)."
                )
            moved[key] = upgraded.pop(flat)
        if not moved:
            return upgraded
        if nested is not None and perturb is None:
            return upgraded  # from_mapping says what perturb must be
        if "seed" in moved and "bootstrap_seed" not in upgraded:
            upgraded["bootstrap_seed"] = moved["seed"]
        upgraded["perturb"] = {**(perturb or {}), **moved}
        return upgraded


BUNDLED_CONFIGS = Path(__file__).parents[1] / "configs"


def resolve_config_path(name_or_path: str | None) -> str | None:
    """A bundled config name (`demo`, `paper`) or a path, as a path."""
    return resolve_bundled(name_or_path, BUNDLED_CONFIGS)


def load_run_config(path: str | None, overrides: Mapping[str, Any]) -> RunConfig:
    """A RunConfig from YAML (if given) with overrides applied on top (`with_overrides`)."""
    where = Path(path).name if path else "config"
    return with_overrides(load_yaml(path) if path else {}, overrides, where)


def with_overrides(data: Mapping[str, Any], overrides: Mapping[str, Any], where: str) -> RunConfig:
    """A RunConfig from a config mapping with overrides (None values ignored) on top:
    top-level keys replace the mapping's, and `perturb`'s and `execution`'s keys (the
    perturbation flags, `--candidate-libraries`) replace only those keys of the block. Either
    may be in the older flat shape (`transforms`, `perturb_seed`, ...:
    `RunConfig.upgrade_mapping`)."""
    base = RunConfig.upgrade_mapping(data, where)
    given = RunConfig.upgrade_mapping(
        {k: v for k, v in overrides.items() if v is not None}, "overrides"
    )
    for key in ("perturb", "execution"):  # a flag replaces its key of the block, no more
        if isinstance(base.get(key), Mapping) and isinstance(given.get(key), Mapping):
            given[key] = {**base[key], **given[key]}
    return from_mapping(RunConfig, {**base, **given}, where)


# PerturbConfig's fields as a run config spelled them at its top level before `perturb`
# nested (older manifests and YAML files; `RunConfig.upgrade_mapping`, `RunConfig.flat_json`).
FLAT_PERTURB_KEYS: dict[str, str] = {
    "transforms": "transforms",
    "anonymous_name": "anonymous_name",
    "params": "transform_params",
    "keep_unchanged": "keep_unchanged",
    "keywords": "keywords",
    "keyword_file": "keyword_file",
    "seed": "perturb_seed",
    "random_seeds": "random_seeds",
}

# Options added after run directories existed, with the value that means what those runs did:
# at that value they are left out of the identity, so older directories still resume.
_LATER_OPTIONS: dict[str, Any] = {"random_seeds": 1, "keyword_file": None}
# The same for a dataset's options: left out of each dataset's entry when unset.
_LATER_DATASET_OPTIONS = ("released_after", "released_before")
# ... and for a setting's decoding, with the value older runs had.
_LATER_DECODING_OPTIONS: dict[str, Any] = {"language": "python"}


def content_digests(config: RunConfig) -> dict[str, Any]:
    """What the run's identity hashes of its files' content, read from the files: each model's
    `content_identity` (a completions file's sha256) and the keyword file's sha256. A run's
    manifest records them, because its config names a file outside the working directory by
    its last part only: a run rebuilt from its manifest (a merge of its shards, anywhere) takes
    them from there instead of reading a file by that name (`run_identity(digests=...)`)."""
    digests: dict[str, Any] = {
        "models": [backend_class(spec.kind).content_identity(spec) for spec in config.models]
    }
    keyword_file = config.perturb.keyword_file
    if keyword_file is not None and Path(keyword_file).is_file():
        # The picks decide the variants: the same path with other picks is another run.
        digests["keyword_file_sha256"] = file_sha256(keyword_file)
    return digests


def run_identity(
    config: RunConfig, *, portable: bool = True, digests: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The config as far as it decides the run's numbers: each model without the options that
    only decide how requests travel (`BackendSpec.identity_mapping`: timeouts, concurrency,
    retries, a pool's servers). A run directory belongs to this, so it resumes after such an
    option changed (a dead server taken out of a pool). `digests`: the files' content as a
    manifest recorded it (`content_digests`); None: read from the files."""
    if digests is None:
        digests = content_digests(config)
    identity = {
        **config.flat_json(),
        "models": [
            spec.identity_mapping(content=content)
            for spec, content in zip(config.models, digests["models"], strict=True)
        ],
    }
    if "keyword_file_sha256" in digests:
        identity["keyword_file_sha256"] = digests["keyword_file_sha256"]
    for key, old_behaviour in _LATER_OPTIONS.items():
        if identity.get(key) == old_behaviour:
            del identity[key]
    identity["datasets"] = [
        {k: v for k, v in spec.items() if not (k in _LATER_DATASET_OPTIONS and v is None)}
        for spec in identity["datasets"]
    ]
    for setting in identity.get("settings") or ():
        decoding = setting.get("decoding") or {}
        for key, old_behaviour in _LATER_DECODING_OPTIONS.items():
            if key in decoding and decoding[key] == old_behaviour:
                del decoding[key]
    # Hashed as the manifest records it (paths portable, `portable_config`), so that a run is
    # the same run from its manifest alone (a merge rebuilds it so) on any machine.
    return dict(portable_config(identity)) if portable else identity


def run_hash(config: RunConfig, digests: Mapping[str, Any] | None = None) -> str:
    """The run directory's config hash: of `run_identity` (`identity_hashes`)."""
    return identity_hashes(run_identity(config, digests=digests))[0]


def work_hash(config: RunConfig, digests: Mapping[str, Any] | None = None) -> str:
    """The hash of what a run computes: its identity without where it is written
    (`identity_hashes`). The shards of one run share it, and `boi merge` checks it."""
    return identity_hashes(run_identity(config, digests=digests))[1]
