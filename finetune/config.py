"""The training configuration: one typed dataclass, loadable from YAML, overridable per field.

Defaults are the paper's recipe for MBPP (appendix 10.3): AdamW, learning rate 1e-5, batch 64,
weight decay 0.01, constant schedule, 10% validation split, early stopping on validation loss.
For MBPP + CodeContests the paper used learning rate 3e-5 and batch 256.

YAML, type checks, did-you-mean for unknown keys and the `--field-name` flags all come from
`benchmarks.common.config`; `python -m finetune.train` and `boi finetune train` add `--config`
(`CONFIG_HELP`) and one flag per field with `add_dataclass_arguments(parser, TrainConfig)`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.config import load_config, to_dict
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.provenance import portable_config

SCHEDULES = ("constant", "cosine", "linear")
MIXED_PRECISION = ("no", "bf16", "fp16")
CONFIG_HELP = "YAML file with config keys (command-line options win)"


def _help(text: str) -> dict[str, str]:
    return {"help": text}


@dataclass
class TrainConfig:
    model: str = field(
        default="embedded",
        metadata=_help("HF causal LM folder or hub id to fine-tune; 'embedded' is SmolLM2-135M"),
    )
    data: str = field(
        default="", metadata=_help("training examples JSONL written by `boi finetune build-data`")
    )
    output_dir: str = field(
        default="", metadata=_help("where checkpoints, the final model and all_results.json go")
    )
    learning_rate: float = field(default=1e-5, metadata=_help("AdamW learning rate"))
    weight_decay: float = field(default=0.01, metadata=_help("AdamW weight decay"))
    batch_size: int = field(
        default=64,
        metadata=_help("effective batch size: per_device_batch_size x processes x accumulation"),
    )
    per_device_batch_size: int = field(
        default=8, metadata=_help("examples per forward pass on each process")
    )
    lr_schedule: str = field(
        default="constant", metadata=_help(f"learning-rate schedule: {', '.join(SCHEDULES)}")
    )
    warmup_steps: int = field(default=0, metadata=_help("optimizer steps of linear warm-up"))
    max_epochs: int = field(default=10, metadata=_help("stop after this many passes over the data"))
    max_steps: int = field(
        default=0, metadata=_help("stop after this many optimizer steps (0: no limit)")
    )
    eval_every: int = field(
        default=0,
        metadata=_help("evaluate on validation every N optimizer steps (0: at each epoch end)"),
    )
    checkpoint_every: int = field(
        default=0,
        metadata=_help(
            "save a resumable checkpoint every N optimizer steps (0: at each evaluation)"
        ),
    )
    patience: int = field(
        default=3,
        metadata=_help("stop after this many evaluations without a better validation loss"),
    )
    min_delta: float = field(
        default=0.0, metadata=_help("a validation loss must improve by more than this to count")
    )
    keep_checkpoints: int = field(
        default=1,
        metadata=_help("resumable checkpoints kept (the newest); the best model is kept apart"),
    )
    max_length: int = field(
        default=1024, metadata=_help("tokens per example; longer prompts lose their left part")
    )
    max_grad_norm: float = field(
        default=1.0, metadata=_help("gradient clipping norm (0: no clipping)")
    )
    mixed_precision: str = field(
        default="no", metadata=_help(f"accelerate mixed precision: {', '.join(MIXED_PRECISION)}")
    )
    deepspeed: str = field(
        default="",
        metadata=_help(
            "DeepSpeed JSON (e.g. finetune/configs/ds_zero3.json) when launched with torchrun; "
            "`accelerate launch --config_file` sets it up by itself"
        ),
    )
    seed: int = field(default=0, metadata=_help("seed for weights init, data order and dropout"))
    log_every: int = field(
        default=1, metadata=_help("print the training loss every N optimizer steps")
    )

    def __post_init__(self) -> None:
        positive = ("batch_size", "per_device_batch_size", "max_epochs", "max_length", "patience")
        for name in positive:
            if getattr(self, name) < 1:
                raise UserError(f"{name} is {getattr(self, name)}; set it to a positive integer.")
        for name in ("max_steps", "eval_every", "checkpoint_every", "warmup_steps"):
            if getattr(self, name) < 0:
                raise UserError(f"{name} is {getattr(self, name)}; use 0 or a positive integer.")
        if self.keep_checkpoints < 1:
            raise UserError("keep_checkpoints must be at least 1, or training could not resume.")
        if self.learning_rate <= 0:
            raise UserError(
                f"learning_rate is {self.learning_rate}; use a positive value such as 1e-5."
            )
        if self.lr_schedule not in SCHEDULES:
            raise UserError(
                f"lr_schedule {self.lr_schedule!r}{suggest(self.lr_schedule, SCHEDULES)} is unknown; use one of {', '.join(SCHEDULES)}."
            )
        if self.mixed_precision not in MIXED_PRECISION:
            raise UserError(
                f"mixed_precision {self.mixed_precision!r} is unknown; use one of {', '.join(MIXED_PRECISION)}."
            )
        if self.batch_size % self.per_device_batch_size:
            raise UserError(
                f"batch_size {self.batch_size} is not a multiple of per_device_batch_size "
                f"{self.per_device_batch_size}; change one of them."
            )

    def require_paths(self) -> None:
        for name in ("data", "output_dir"):
            if not getattr(self, name):
                raise UserError(
                    f"No {name} given; set `{name}:` in the config or pass --{name.replace('_', '-')}."
                )

    def gradient_accumulation_steps(self, num_processes: int) -> int:
        per_step = self.per_device_batch_size * num_processes
        if self.batch_size % per_step:
            raise UserError(
                f"batch_size {self.batch_size} is not divisible by per_device_batch_size x processes "
                f"= {per_step}; change batch_size or per_device_batch_size."
            )
        return self.batch_size // per_step

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = to_dict(self)
        return data

    def identity(self, data_sha256: str, *, portable: bool = True) -> str:
        """Hash of everything that defines the run (not where it is written).

        Not `provenance.config_hash`: that one dumps JSON with compact separators, so it gives
        another digest for the same config, and every existing output_dir (its run_config.json
        records this one) would be refused instead of resumed. Hashed with the paths as the
        manifest records them (`portable_config`: a model folder by its last part), so the run
        is the same run from its manifest alone; `portable=False`: with the paths as typed, as
        boi hashed it before (an older output_dir records that one).
        """
        # The data file counts by content (its hash), not by where it lies.
        fields = {
            k: v for k, v in self.to_json().items() if k not in {"output_dir", "log_every", "data"}
        }
        if portable:
            fields = dict(portable_config(fields))
        fields["data_sha256"] = data_sha256
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


def load_train_config(
    path: str | os.PathLike[str] | None, overrides: Mapping[str, Any] | None = None
) -> TrainConfig:
    """A TrainConfig from a YAML file (optional) with `overrides` (None values ignored) on top."""
    return load_config(TrainConfig, path, overrides)
