"""DeepSpeed ZeRO-3 on CPU: two ranks (torchrun, gloo), partitioned parameters, sharded data."""

from __future__ import annotations

import json
import socket

import pytest

from tests.finetune_helpers import REPO, run_python, toy_examples, write_toy_run


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _validation_loss_of_export(run_dir, results) -> float:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from finetune.data import (
        collate,
        read_training_examples,
        resolve_pad_token_id,
        solution_loss,
        tokenize_example,
    )

    model = AutoModelForCausalLM.from_pretrained(run_dir / "model")
    tokenizer = AutoTokenizer.from_pretrained(run_dir / "model")
    items = [
        tokenize_example(tokenizer, e, results["config"]["max_length"])
        for e in read_training_examples(results["config"]["data"])
        if e.split == "validation"
    ]
    batch = collate(items, resolve_pad_token_id(tokenizer)[0])
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        total, count = solution_loss(logits, batch["labels"])
    return float(total / count)


@pytest.mark.slow  # two torchrun ranks building and running DeepSpeed ZeRO-3 (about a minute)
def test_zero3_two_cpu_ranks_partition_shard_train_and_export(tmp_path):
    examples = toy_examples(24)
    config = write_toy_run(tmp_path, examples, max_epochs=2)
    proc = run_python(
        [
            "-m", "torch.distributed.run", "--nproc_per_node", "2",
            "--master_port", str(_free_port()),
            "-m", "finetune.train", "--config", str(config),
            "--deepspeed", str(REPO / "finetune" / "configs" / "ds_zero3.json"),
        ],
        timeout=300,
        # DeepSpeed builds its CPU comm op here; a lock left in the shared cache by a build
        # killed elsewhere must not stall this test.
        env={"TORCH_EXTENSIONS_DIR": str(tmp_path / "torch_extensions")},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    run = tmp_path / "run"
    results = json.loads((run / "all_results.json").read_text())
    dist = results["distributed"]

    assert dist["num_processes"] == 2
    assert (dist["distributed_type"], dist["zero_stage"]) == ("DEEPSPEED", 3)
    # Each rank holds a shard (ZeRO pads partitions, so the shards sum to at least the total).
    assert all(0 < local < dist["param_numel"] for local in dist["param_numel_per_process"])
    assert sum(dist["param_numel_per_process"]) >= dist["param_numel"]

    # Data sharded: within an epoch the ranks see different examples, together all of them.
    train_ids = {e.example_id for e in examples if e.split == "train"}
    orders = [
        [
            json.loads(line)
            for line in (run / "data_order" / f"rank-{r}.jsonl").read_text().splitlines()
        ]
        for r in (0, 1)
    ]
    full_batches = len(train_ids) // 4  # batches every rank fills without accelerate's padding
    seen = [
        [
            i
            for rec in order
            if rec["epoch"] == 0 and rec["batch"] < full_batches
            for i in rec["example_ids"]
        ]
        for order in orders
    ]
    assert not set(seen[0]) & set(seen[1])
    epoch0 = {
        i for order in orders for rec in order if rec["epoch"] == 0 for i in rec["example_ids"]
    }
    assert epoch0 == train_ids

    losses = [loss for _, loss in results["train_losses"]]
    assert losses[-1] < losses[0] - 0.5
    assert results["best_step"] == results["step"]

    # The gathered (consolidated) weights, reloaded by plain transformers in one process,
    # reproduce the validation loss the sharded model measured when they were exported.
    assert _validation_loss_of_export(run, results) == pytest.approx(
        results["best_val_loss"], rel=1e-5
    )


def test_a_lock_left_by_a_killed_op_build_is_refused_in_one_sentence(tmp_path, monkeypatch):
    """torch waits for that lock forever; the trainer says which file to delete instead."""
    import os
    import time

    from benchmarks.common.errors import UserError
    from finetune.train import CPU_COMM_OP, _refuse_stale_cpu_op_lock

    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path))
    _refuse_stale_cpu_op_lock()  # no build folder yet
    lock = tmp_path / CPU_COMM_OP / "lock"
    lock.parent.mkdir()
    lock.touch()
    _refuse_stale_cpu_op_lock()  # a build running now holds a fresh lock
    hour_ago = time.time() - 3600
    os.utime(lock, (hour_ago, hour_ago))
    with pytest.raises(UserError, match=f"{lock} is 60 minutes old.*delete that file"):
        _refuse_stale_cpu_op_lock()
