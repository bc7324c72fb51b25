"""Fine-tune a causal LM on `boi finetune build-data` examples, with Accelerate (+ DeepSpeed).

The accelerate example shape: `get_dataloaders`, `training_function`, `main`. Launch it as

    python -m finetune.train --config finetune/configs/train.yaml                      # one process (CPU or GPU)
    accelerate launch --config_file finetune/configs/accelerate_zero3.yaml -m finetune.train ...
    torchrun --nproc_per_node 2 -m finetune.train --config finetune/configs/train.yaml --deepspeed finetune/configs/ds_zero3.json

Output directory layout:

    run_config.json        the run's manifest (benchmarks.common.rundir): config, identity hash,
                           versions, completed; a different run is refused here
    checkpoints/step-N/    resumable state (model, optimizer, RNG, trainer_state.json)
    model/                 the best validation checkpoint as a plain HF folder (+ tokenizer)
    metrics.jsonl          one line per optimizer step / evaluation
    data_order/rank-R.jsonl  the example ids each process trained on, per micro-batch
    all_results.json       config, metrics, data counts, versions; written when training ends

A killed run resumes from its newest checkpoint when the same command is run again: model,
optimizer, RNG and the position in the data order are restored, so it continues exactly where the
checkpoint was taken. Checkpoints and the best model are written beside their final place and
renamed into it, so a crash never leaves a half-written one in place of a good one.

torch and accelerate are imported inside the functions that use them (transformers inside
`benchmarks.common.models`): importing them takes seconds, which `--help` and a config error
should not wait for.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import parked_finals, recover_dir, replace_dir, write_text_atomic
from benchmarks.common.config import add_dataclass_arguments, overrides_from_args
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import JsonlAppender
from benchmarks.common.models import load_model, load_tokenizer, resolve_model
from benchmarks.common.progress import progress_bar
from benchmarks.common.provenance import (
    file_sha256,
    git_revision,
    package_versions,
    portable_config,
)
from benchmarks.common.rundir import RunDir, claim_run_dir, read_marker
from finetune.config import CONFIG_HELP, TrainConfig, load_train_config
from finetune.data import (
    Skipped,
    TokenizedExample,
    collate,
    read_training_examples,
    resolve_pad_token_id,
    solution_loss,
    tokenize_example,
)

CHECKPOINTS = "checkpoints"
MODEL = "model"
RUN_CONFIG = "run_config.json"
RESULTS = "all_results.json"


@dataclass
class TrainerState:
    """Where training stands; saved with every checkpoint."""

    step: int = 0
    epoch: int = 0
    batches_in_epoch: int = 0
    micro_batches: int = 0
    best_val_loss: float | None = None
    best_step: int | None = None
    evals_without_improvement: int = 0
    stop_reason: str | None = None
    train_losses: list[list[float]] = field(default_factory=list)
    val_losses: list[list[float]] = field(default_factory=list)


class EpochSampler:
    """A permutation of the training set drawn from (seed, epoch): the same order on every run,
    so a resumed run sees the batches the killed one would have seen."""

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __iter__(self) -> Iterator[int]:
        import torch  # lazy: heavy

        generator = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        return iter(torch.randperm(self.size, generator=generator).tolist())

    def __len__(self) -> int:
        return self.size


class _Examples:
    """Tokenised examples as a map-style dataset; items carry their index for the data log."""

    def __init__(self, items: Sequence[TokenizedExample]) -> None:
        self.items = list(items)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index: int) -> tuple[int, TokenizedExample]:
        return index, self.items[index]


def _tokenize_split(
    tokenizer: Any, examples: Sequence[Any], max_length: int
) -> tuple[list[TokenizedExample], list[Skipped], int]:
    kept, skipped, truncated = [], [], 0
    for example in examples:
        result = tokenize_example(tokenizer, example, max_length)
        if isinstance(result, Skipped):
            skipped.append(result)
        else:
            kept.append(result)
            truncated += result.prompt_tokens_dropped > 0
    return kept, skipped, truncated


def get_dataloaders(
    config: TrainConfig, tokenizer: Any
) -> tuple[Any, list[TokenizedExample], dict[str, Any]]:
    """The training dataloader (to be sharded across processes by `accelerator.prepare`), the
    tokenised validation examples, and counts for the results file."""
    from torch.utils.data import DataLoader  # lazy: heavy

    examples = read_training_examples(config.data)
    train = [e for e in examples if e.split == "train"]
    validation = [e for e in examples if e.split == "validation"]
    if not train:
        raise UserError(
            f"{config.data} has no training examples (split 'train'); rebuild the data."
        )
    if not validation:
        raise UserError(
            f"{config.data} has no validation examples, so early stopping cannot work; rebuild "
            "it with a validation fraction above 0."
        )
    train_items, train_skipped, train_truncated = _tokenize_split(
        tokenizer, train, config.max_length
    )
    val_items, val_skipped, val_truncated = _tokenize_split(
        tokenizer, validation, config.max_length
    )
    if not train_items or not val_items:
        raise UserError(
            f"No example fits max_length={config.max_length} in the "
            f"{'training' if not train_items else 'validation'} split; raise max_length."
        )
    pad_token_id, pad_note = resolve_pad_token_id(tokenizer)
    sampler = EpochSampler(len(train_items), config.seed)
    dataset: Any = _Examples(train_items)  # a map-style dataset; DataLoader needs no more
    loader: Any = DataLoader(
        dataset,
        batch_size=config.per_device_batch_size,
        sampler=sampler,
        collate_fn=lambda batch: _collate_with_index(batch, pad_token_id),
    )
    info = {
        "train_examples": len(train_items),
        "validation_examples": len(val_items),
        "prompts_truncated": train_truncated + val_truncated,
        "skipped": [s.to_json() for s in train_skipped + val_skipped],
        "pad_token_id": pad_token_id,
        "pad_token": pad_note,
        "augmented_examples": sum(bool(e.lineage) for e in train),
        "flavours": sorted({e.flavour for e in examples}),
    }
    return loader, val_items, info


def _collate_with_index(batch: Sequence[tuple[int, TokenizedExample]], pad_token_id: int) -> dict:
    import torch  # lazy: heavy

    tensors = collate([item for _, item in batch], pad_token_id)
    tensors["index"] = torch.tensor([index for index, _ in batch])
    return tensors


def _validation_loss(
    accelerator: Any,
    model: Any,
    items: Sequence[TokenizedExample],
    batch_size: int,
    pad_token_id: int,
) -> float:
    """Mean loss per solution token over the whole validation split.

    Each process takes every num_processes-th example; all processes run the same number of
    forward passes (ZeRO-3 gathers parameters collectively), padding with a zero-weight batch.
    """
    import torch  # lazy: heavy

    shard = list(items[accelerator.process_index :: accelerator.num_processes])
    longest = math.ceil(len(items) / accelerator.num_processes)
    total = torch.zeros(2, dtype=torch.float64, device=accelerator.device)
    model.eval()
    with torch.no_grad():
        for start in range(0, longest, batch_size):
            batch_items = shard[start : start + batch_size]
            weight = 1.0 if batch_items else 0.0
            batch = collate(batch_items or list(items[:1]), pad_token_id)
            batch = {k: v.to(accelerator.device) for k, v in batch.items()}
            logits = model(
                input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
            ).logits
            loss_sum, count = solution_loss(logits, batch["labels"])
            total += weight * torch.stack([loss_sum.double(), count.double()])
    model.train()
    total = accelerator.reduce(total, reduction="sum")
    return float(total[0] / total[1].clamp(min=1))


def _learning_rate(config: TrainConfig, step: int, total_steps: int) -> float:
    """The learning rate for optimizer step `step` (0-based): a pure function, so resuming
    needs no scheduler state."""
    if config.warmup_steps and step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    if config.lr_schedule == "constant":
        return config.learning_rate
    progress = (step - config.warmup_steps) / max(1, total_steps - config.warmup_steps)
    progress = min(1.0, progress)
    if config.lr_schedule == "linear":
        return config.learning_rate * (1 - progress)
    return config.learning_rate * 0.5 * (1 + math.cos(math.pi * progress))


# --- output directory, checkpoints, export ----------------------------------------------------


def latest_checkpoint(output_dir: Path) -> Path | None:
    """The newest complete checkpoint (its trainer_state.json is written last)."""
    folder = output_dir / CHECKPOINTS
    if not folder.is_dir():
        return None
    complete = [p for p in folder.glob("step-*") if (p / "trainer_state.json").exists()]
    return max(complete, key=lambda p: int(p.name.split("-")[1]), default=None)


def _recover_output_dir(output_dir: Path) -> None:
    """Undo what a kill during a save left behind: temporary folders, a half-swapped folder."""
    recover_dir(output_dir / MODEL)
    if (output_dir / CHECKPOINTS).is_dir():
        for final in parked_finals(output_dir / CHECKPOINTS, "step-*"):
            recover_dir(final)
    for leftover in [*output_dir.glob(".tmp-*"), *(output_dir / CHECKPOINTS).glob(".tmp-*")]:
        shutil.rmtree(leftover)


def _save_checkpoint(accelerator: Any, output_dir: Path, state: TrainerState, keep: int) -> Path:
    final = output_dir / CHECKPOINTS / f"step-{state.step:08d}"
    tmp = output_dir / CHECKPOINTS / f".tmp-step-{state.step:08d}"
    if accelerator.is_main_process:
        tmp.mkdir(parents=True, exist_ok=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_text_atomic(tmp / "trainer_state.json", json.dumps(asdict(state), indent=1))
        replace_dir(tmp, final)
        older = sorted(
            (p for p in final.parent.glob("step-*") if p != final),
            key=lambda p: int(p.name.split("-")[1]),
        )
        for stale in older[: max(0, len(older) - (keep - 1))]:
            shutil.rmtree(stale)
    accelerator.wait_for_everyone()
    return final


def _export_model(
    accelerator: Any, model: Any, tokenizer: Any, output_dir: Path, summary: dict[str, Any]
) -> None:
    """Write the current weights as a plain HF folder to output_dir/model, atomically.

    Under ZeRO-3 `get_state_dict` gathers the partitioned parameters (16-bit when DeepSpeed
    trains in 16 bit, `stage3_gather_16bit_weights_on_model_save`), on every process.
    """
    state_dict = accelerator.get_state_dict(model)
    if accelerator.is_main_process:
        tmp = output_dir / f".tmp-{MODEL}"
        if tmp.exists():
            shutil.rmtree(tmp)
        accelerator.unwrap_model(model).save_pretrained(
            tmp, state_dict=state_dict, safe_serialization=True
        )
        tokenizer.save_pretrained(tmp)
        write_text_atomic(tmp / "boi_training.json", json.dumps(summary, indent=1))
        replace_dir(tmp, output_dir / MODEL)
    accelerator.wait_for_everyone()


def _sharding_info(accelerator: Any, model: Any) -> dict[str, Any]:
    """Parameter counts: total, and what this process holds (a ZeRO-3 shard or everything)."""
    total = local = 0
    for parameter in model.parameters():
        full = getattr(parameter, "ds_numel", None)
        total += full if full is not None else parameter.numel()
        shard = getattr(parameter, "ds_tensor", None)
        local += shard.numel() if shard is not None else parameter.numel()
    from accelerate.utils import gather_object  # lazy: heavy

    locals_ = gather_object([local]) if accelerator.num_processes > 1 else [local]
    return {"param_numel": total, "param_numel_per_process": [int(x) for x in locals_]}


# --- training ---------------------------------------------------------------------------------


def _make_accelerator(config: TrainConfig) -> tuple[Any, int]:
    import torch  # lazy: heavy
    from accelerate import Accelerator
    from accelerate.utils import DeepSpeedPlugin, InitProcessGroupKwargs

    world = int(os.environ.get("WORLD_SIZE", "1"))
    accumulation = config.gradient_accumulation_steps(world)
    kwargs: dict[str, Any] = {
        "gradient_accumulation_steps": accumulation,
        "mixed_precision": config.mixed_precision,
    }
    use_deepspeed = bool(config.deepspeed) or os.environ.get("ACCELERATE_USE_DEEPSPEED") == "true"
    if config.deepspeed:
        if not Path(config.deepspeed).is_file():
            raise UserError(f"DeepSpeed config {config.deepspeed} does not exist; check the path.")
        kwargs["deepspeed_plugin"] = DeepSpeedPlugin(
            hf_ds_config=config.deepspeed,
            zero3_init_flag=True,
            gradient_clipping=config.max_grad_norm or None,
        )
    if world > 1 and not torch.cuda.is_available():
        if use_deepspeed:
            # Accelerate picks a backend only for accelerators; on CPU DeepSpeed would default to
            # ccl, which is not available, and each rank would train alone. gloo works.
            kwargs["kwargs_handlers"] = [InitProcessGroupKwargs(backend="gloo")]
            _refuse_stale_cpu_op_lock()
        else:
            kwargs["cpu"] = True
    accelerator = Accelerator(**kwargs)
    distributed_type = str(accelerator.distributed_type).split(".")[-1]
    if use_deepspeed and distributed_type != "DEEPSPEED":
        raise UserError(
            f"DeepSpeed was asked for but accelerate set up {distributed_type}; remove "
            "`use_cpu: true` from the accelerate config (the trainer handles CPU ranks itself)."
        )
    if accelerator.num_processes != world:
        raise UserError(
            f"WORLD_SIZE is {world} but accelerate set up {accelerator.num_processes} process(es); "
            "launch with torchrun or accelerate launch and a matching config."
        )
    return accelerator, accumulation


# DeepSpeed JIT-builds this op on CPU ranks, under torch's FileBaton lock, when its backend starts.
CPU_COMM_OP = "deepspeed_shm_comm"
# The build takes well under a minute; a lock this old was left by a build that was killed.
STALE_LOCK_SECONDS = 600


def _refuse_stale_cpu_op_lock() -> None:
    """Refuse to start when the CPU comm-op build lock was left behind by a killed build.

    torch's FileBaton waits for that lock forever and says nothing, so a launch killed while
    compiling would leave every later CPU DeepSpeed run hanging before its first line of output.
    """
    import torch  # lazy: heavy
    from torch.utils.cpp_extension import get_default_build_root

    # The folder torch.utils.cpp_extension builds in (its _get_build_directory, which is private).
    if torch.version.hip is not None:
        build = f"rocm{torch.version.hip.replace('.', '')}"
    elif torch.version.cuda is not None:
        build = f"cu{torch.version.cuda.replace('.', '')}"
    else:
        build = "cpu"
    python = f"py{sys.version_info.major}{sys.version_info.minor}{getattr(sys, 'abiflags', '')}"
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(
        get_default_build_root(), f"{python}_{build}"
    )
    lock = Path(root) / CPU_COMM_OP / "lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return
    if age > STALE_LOCK_SECONDS:
        raise UserError(
            f"{lock} is {age / 60:.0f} minutes old: a DeepSpeed op build was killed and left its "
            "lock, and this run would wait for it forever; delete that file if no other "
            "training run is starting, then launch again."
        )


@dataclass
class _Claim:
    """The output directory as this process claimed it, before any process writes there."""

    output_dir: Path
    data_sha256: str
    identity: str
    # The run_config.json record of the run this one resumes; None for a new run.
    previous: dict[str, Any] | None

    @property
    def resuming(self) -> bool:
        """Whether output_dir already holds this run."""
        return self.previous is not None


@dataclass
class _Session:
    """What the steps of one training session share (`state` is what a checkpoint keeps)."""

    config: TrainConfig
    accelerator: Any
    accumulation: int
    claim: _Claim
    tokenizer: Any
    model: Any
    optimizer: Any
    train_dl: Any
    val_items: list[TokenizedExample]
    data_info: dict[str, Any]
    sharding: dict[str, Any]
    train_ids: list[str]
    total_steps: int
    # The checkpoint this session resumed from; None when it started the run.
    checkpoint: Path | None
    state: TrainerState
    # Written by the main process only.
    metrics: JsonlAppender | None
    order_log: JsonlAppender
    # Summed solution loss and token count of the optimizer step being accumulated.
    step_loss: Any
    steps_this_session: int = 0
    # The main process's bar over optimizer steps (None elsewhere): training is otherwise
    # silent between `log_every` lines and evaluations.
    progress: Callable[[int, int], None] | None = None


def training_function(config: TrainConfig) -> dict[str, Any]:
    """Train, evaluate, checkpoint and export; returns what all_results.json holds."""
    # Every process claims (and so knows whether it resumes) before any writes: the main process
    # writes only after _start_output_dir's first wait_for_everyone.
    claim = _claim_output_dir(config)
    accelerator, accumulation = _make_accelerator(config)
    results_path = claim.output_dir / RESULTS
    run, finished = _start_output_dir(accelerator, config, claim)
    checkpoint = latest_checkpoint(claim.output_dir) if claim.resuming else None
    if finished:
        accelerator.print(f"{claim.output_dir} already holds the finished run; see {results_path}.")
        finished_results: dict[str, Any] = json.loads(results_path.read_text(encoding="utf-8"))
        return finished_results

    session = _build_session(config, accelerator, accumulation, claim, checkpoint)
    started = time.monotonic()
    _train(session)
    seconds = time.monotonic() - started
    session.order_log.close()
    if session.metrics:
        session.metrics.close()
    results = _results(session, seconds)
    _write_results(session, results, run)
    accelerator.end_training()
    return results


# --- the output directory ---------------------------------------------------------------------


def _claim_output_dir(config: TrainConfig) -> _Claim:
    """Check the inputs and claim output_dir on this process (a new one is created, empty)."""
    config.require_paths()
    if not Path(config.data).is_file():
        raise UserError(
            f"Training data {config.data} does not exist; run boi finetune build-data first."
        )
    output_dir = Path(config.output_dir)
    data_sha256 = file_sha256(config.data)
    identity = config.identity(data_sha256)
    recorded = read_marker(output_dir, RUN_CONFIG) if output_dir.is_dir() else None
    if recorded is not None and recorded.get("identity") == config.identity(
        data_sha256, portable=False
    ):
        # Written before the config was recorded with portable paths: still this run.
        identity = str(recorded["identity"])
    # A new or empty output_dir starts the run, one whose run_config.json records this identity
    # resumes it, anything else is refused (saying which config keys changed).
    previous = claim_run_dir(
        output_dir,
        identity,
        portable_config(config.to_json()),
        marker=RUN_CONFIG,
        hash_key="identity",
        what="training run",
        option="output_dir",
        unchanged=" (the data file changed)",
    )
    return _Claim(output_dir, data_sha256, identity, previous)


def _start_output_dir(
    accelerator: Any, config: TrainConfig, claim: _Claim
) -> tuple[RunDir | None, bool]:
    """Once every process has claimed: the main process tidies a resumed folder and writes
    run_config.json; returns that run (main process, unfinished run) and whether it finished."""
    finished = claim.resuming and (claim.output_dir / RESULTS).exists()
    run: RunDir | None = None
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        if claim.resuming:
            _recover_output_dir(claim.output_dir)
        if not finished:
            # Every process claimed above (each knows whether it resumes); one writes.
            run = RunDir.start(
                claim.output_dir,
                # What reproduces the run, not the machine: paths relative or by name.
                portable_config(config.to_json()),
                claim.identity,
                claim.previous,
                inputs={"data": config.data},
                record={"seed": config.seed},
                marker=RUN_CONFIG,
                hash_key="identity",
            )
    accelerator.wait_for_everyone()
    return run, finished


# --- model, data, optimizer, logs -------------------------------------------------------------


def _build_session(
    config: TrainConfig,
    accelerator: Any,
    accumulation: int,
    claim: _Claim,
    checkpoint: Path | None,
) -> _Session:
    """Load tokenizer, data and model, prepare them for the processes, restore the checkpoint."""
    import torch  # lazy: heavy
    from accelerate.utils import set_seed

    with accelerator.main_process_first():
        # The embedded model is converted on first use; one process does it, the others reuse it.
        model_path = resolve_model(config.model or None)
    tokenizer = load_tokenizer(model_path, shown=config.model)
    train_dl, val_items, data_info = get_dataloaders(config, tokenizer)
    # The model is built after set_seed so the seed also controls any newly initialised weights;
    # under ZeRO-3 (zero3_init_flag) it is partitioned across processes as it loads. It is
    # loaded in float32 (accelerate / DeepSpeed apply mixed precision) onto accelerate's device,
    # where ZeRO-3 already put its partitions, so the move is a no-op for them.
    set_seed(config.seed)
    model = load_model(model_path, dtype="fp32", device=str(accelerator.device), shown=config.model)
    optimizer = _make_optimizer(config, model)
    # One prepare call: DeepSpeed takes its micro-batch size from the dataloader.
    model, optimizer, train_dl = accelerator.prepare(model, optimizer, train_dl)
    sharding = _sharding_info(accelerator, model)
    train_ids = [item.example_id for item in train_dl.dataset.items]

    steps_per_epoch = math.ceil(len(train_dl) / accumulation)
    total_steps = config.max_steps or steps_per_epoch * config.max_epochs
    state = _restore_state(accelerator, checkpoint)
    metrics, order_log = _open_logs(accelerator, claim.output_dir, state, checkpoint)
    return _Session(
        config=config,
        accelerator=accelerator,
        accumulation=accumulation,
        claim=claim,
        tokenizer=tokenizer,
        model=model,
        optimizer=optimizer,
        train_dl=train_dl,
        val_items=val_items,
        data_info=data_info,
        sharding=sharding,
        train_ids=train_ids,
        total_steps=total_steps,
        checkpoint=checkpoint,
        state=state,
        metrics=metrics,
        order_log=order_log,
        step_loss=torch.zeros(2, dtype=torch.float64, device=accelerator.device),
    )


def _make_optimizer(config: TrainConfig, model: Any) -> Any:
    """AdamW with weight decay on the weight matrices, none on biases and norms."""
    import torch  # lazy: heavy

    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "norm" not in n.lower()]
    no_decay = [
        p for n, p in model.named_parameters() if not (p.ndim >= 2 and "norm" not in n.lower())
    ]
    return torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": config.weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=config.learning_rate,
    )


def _restore_state(accelerator: Any, checkpoint: Path | None) -> TrainerState:
    """Load the checkpoint into the prepared objects and return its trainer state (or a new one)."""
    if checkpoint is None:
        return TrainerState()
    accelerator.load_state(str(checkpoint))
    state = TrainerState(
        **json.loads((checkpoint / "trainer_state.json").read_text(encoding="utf-8"))
    )
    accelerator.print(f"resuming from {checkpoint} (step {state.step}, epoch {state.epoch})")
    return state


def _open_logs(
    accelerator: Any, output_dir: Path, state: TrainerState, checkpoint: Path | None
) -> tuple[JsonlAppender | None, JsonlAppender]:
    """Open metrics.jsonl (main process) and this process's data-order log for appending."""
    keep_to = state.micro_batches if checkpoint is not None else None
    # A resumed run first forgets what the logs hold from after its checkpoint; a new one
    # (or one killed before its first checkpoint) starts them empty.
    metrics = (
        JsonlAppender(
            output_dir / "metrics.jsonl",
            keep=lambda r: r["step"] <= state.step,
            fresh=checkpoint is None,
        )
        if accelerator.is_main_process
        else None
    )
    order_log = JsonlAppender(
        output_dir / "data_order" / f"rank-{accelerator.process_index}.jsonl",
        keep=lambda r: r["micro_batch"] < keep_to,
        fresh=keep_to is None,
    )
    return metrics, order_log


# --- the training loop ------------------------------------------------------------------------


def _train(session: _Session) -> None:
    """Train until a stop reason: a baseline evaluation on a new run, then epoch after epoch."""
    state = session.state
    session.model.train()
    if session.accelerator.is_main_process:
        session.progress = progress_bar(session.total_steps, "train", unit="step")
        session.progress(state.step, session.total_steps)  # a resumed run starts where it was
    if session.checkpoint is None:
        # A baseline before any update, so early stopping can tell fine-tuning made things worse.
        _evaluate(session)
    while state.stop_reason is None and state.epoch < session.config.max_epochs:
        if not _train_epoch(session):
            _end_epoch(session)


def _train_epoch(session: _Session) -> bool:
    """Train on the rest of the current epoch's batches; True when a stop reason cut it short."""
    accelerator, state, train_dl = session.accelerator, session.state, session.train_dl
    # The prepared loader re-seeds its sampler from its own epoch counter on every pass,
    # so that counter is set, not just the sampler's.
    train_dl.set_epoch(state.epoch)
    loader = (
        accelerator.skip_first_batches(train_dl, state.batches_in_epoch)
        if state.batches_in_epoch
        else train_dl
    )
    for batch in loader:
        lr = _micro_batch(session, batch)
        if not accelerator.sync_gradients:
            continue
        if _finish_step(session, lr):
            return True
    return False


def _micro_batch(session: _Session, batch: dict[str, Any]) -> float:
    """Forward and backward one micro-batch (the optimizer steps when gradients sync) and log
    its examples; returns the learning rate it used."""
    import torch  # lazy: heavy

    config, accelerator, state = session.config, session.accelerator, session.state
    model, optimizer = session.model, session.optimizer
    with accelerator.accumulate(model):
        lr = _learning_rate(config, state.step, session.total_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        loss_sum, count = solution_loss(logits, batch["labels"])
        accelerator.backward(loss_sum / count.clamp(min=1))
        if accelerator.sync_gradients and config.max_grad_norm:
            accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
    session.step_loss += torch.stack([loss_sum.detach().double(), count.double()])
    session.order_log.append(
        {
            "micro_batch": state.micro_batches,
            "epoch": state.epoch,
            "batch": state.batches_in_epoch,
            "example_ids": [session.train_ids[i] for i in batch["index"].tolist()],
        }
    )
    state.micro_batches += 1
    state.batches_in_epoch += 1
    return lr


def _finish_step(session: _Session, lr: float) -> bool:
    """After an optimizer step: log its loss, evaluate and checkpoint when due; True: stop."""
    config, state = session.config, session.state
    state.step += 1
    session.steps_this_session += 1
    if session.progress is not None:
        session.progress(state.step, session.total_steps)
    _log_step_loss(session, lr)
    stop = False
    if config.eval_every and state.step % config.eval_every == 0:
        stop = _evaluate(session)
    if config.max_steps and state.step >= config.max_steps:
        state.stop_reason = state.stop_reason or f"max_steps {config.max_steps} reached"
        stop = True
    checkpoint_due = (
        state.step % config.checkpoint_every == 0
        if config.checkpoint_every
        else bool(config.eval_every) and state.step % config.eval_every == 0
    )
    if checkpoint_due and not stop:
        _save_checkpoint(
            session.accelerator, session.claim.output_dir, state, config.keep_checkpoints
        )
    return stop


def _log_step_loss(session: _Session, lr: float) -> None:
    """Sum the step's loss over all processes, record it and start the next step's sum."""
    accelerator, state = session.accelerator, session.state
    reduced = accelerator.reduce(session.step_loss, reduction="sum")
    train_loss = float(reduced[0] / reduced[1].clamp(min=1))
    session.step_loss.zero_()
    state.train_losses.append([state.step, train_loss])
    if session.metrics:
        session.metrics.append(
            {"step": state.step, "epoch": state.epoch, "train_loss": train_loss, "lr": lr}
        )
    if state.step % session.config.log_every == 0:
        accelerator.print(f"step {state.step}/{session.total_steps}: train loss {train_loss:.4f}")


def _end_epoch(session: _Session) -> None:
    """After a whole epoch: evaluate (when not evaluating every N steps) and checkpoint."""
    config, state = session.config, session.state
    state.epoch += 1
    state.batches_in_epoch = 0
    stop = _evaluate(session) if not config.eval_every else False
    if state.epoch >= config.max_epochs and state.stop_reason is None:
        state.stop_reason = f"max_epochs {config.max_epochs} reached"
    if not stop and state.stop_reason is None:
        _save_checkpoint(
            session.accelerator, session.claim.output_dir, state, config.keep_checkpoints
        )


def _evaluate(session: _Session) -> bool:
    """Validation loss; export the model when it is the best so far. True: stop early."""
    config, accelerator, state = session.config, session.accelerator, session.state
    loss = _validation_loss(
        accelerator,
        session.model,
        session.val_items,
        config.per_device_batch_size,
        session.data_info["pad_token_id"],
    )
    state.val_losses.append([state.step, loss])
    improved = state.best_val_loss is None or loss < state.best_val_loss - config.min_delta
    if improved:
        state.best_val_loss, state.best_step, state.evals_without_improvement = (
            loss,
            state.step,
            0,
        )
        _export_model(
            accelerator,
            session.model,
            session.tokenizer,
            session.claim.output_dir,
            _summary(session),
        )
    else:
        state.evals_without_improvement += 1
    if session.metrics:
        session.metrics.append(
            {"step": state.step, "epoch": state.epoch, "val_loss": loss, "best": improved}
        )
    accelerator.print(
        f"step {state.step}: validation loss {loss:.4f}{' (best)' if improved else ''}"
    )
    if state.evals_without_improvement >= config.patience:
        state.stop_reason = f"early stopping: {config.patience} evaluations without improvement"
        return True
    return False


# --- results ----------------------------------------------------------------------------------


def _summary(session: _Session) -> dict[str, Any]:
    """The run and its best model so far (boi_training.json, the head of all_results.json)."""
    state = session.state
    return {
        "config": session.config.to_json(),
        "identity": session.claim.identity,
        "best_step": state.best_step,
        "best_val_loss": state.best_val_loss,
        "step": state.step,
    }


def _results(session: _Session, seconds: float) -> dict[str, Any]:
    """What all_results.json holds: the summary, losses, data counts, distribution, versions."""
    config, accelerator, state = session.config, session.accelerator, session.state
    steps, accumulation = session.steps_this_session, session.accumulation
    return {
        **_summary(session),
        "completed": True,
        "stop_reason": state.stop_reason,
        "epochs_completed": state.epoch,
        "train_losses": state.train_losses,
        "val_losses": state.val_losses,
        "resumed_from": str(session.checkpoint) if session.checkpoint else None,
        "seconds_this_session": round(seconds, 2),
        "seconds_per_step": round(seconds / steps, 4) if steps else None,
        "data": {
            **session.data_info,
            "path": str(config.data),
            "sha256": session.claim.data_sha256,
        },
        "distributed": {
            "num_processes": accelerator.num_processes,
            "distributed_type": str(accelerator.distributed_type).split(".")[-1],
            "zero_stage": _zero_stage(accelerator),
            "gradient_accumulation_steps": accumulation,
            "effective_batch_size": config.per_device_batch_size
            * accumulation
            * accelerator.num_processes,
            **session.sharding,
        },
        "versions": package_versions(),
        "git_commit": git_revision()["commit"],
    }


def _write_results(session: _Session, results: dict[str, Any], run: RunDir | None) -> None:
    """Write all_results.json (beside the model too) and complete the manifest (main process)."""
    accelerator, state, output_dir = session.accelerator, session.state, session.claim.output_dir
    if accelerator.is_main_process:
        text = json.dumps(results, indent=1)
        if (output_dir / MODEL).exists():
            write_text_atomic(output_dir / MODEL / RESULTS, text)
        results_path = output_dir / RESULTS
        write_text_atomic(results_path, text)
        if run is not None:
            run.complete(stop_reason=state.stop_reason, results=RESULTS)
        print(
            f"done: {state.stop_reason}; best validation loss {state.best_val_loss:.4f} at step "
            f"{state.best_step}; model in {output_dir / MODEL}"
        )
    accelerator.wait_for_everyone()


def _zero_stage(accelerator: Any) -> int | None:
    plugin = getattr(accelerator.state, "deepspeed_plugin", None)
    return None if plugin is None else int(plugin.zero_stage)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m finetune.train", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--config", help=CONFIG_HELP)
    add_dataclass_arguments(parser, TrainConfig)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        training_function(load_train_config(args.config, overrides_from_args(args, TrainConfig)))
    except UserError as err:
        print(f"finetune train: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
