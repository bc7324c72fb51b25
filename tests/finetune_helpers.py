"""Tiny in-process model, tokenizer and training data for the fine-tuning tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from finetune.data import TrainingExample, assign_splits, write_training_examples

REPO = Path(__file__).resolve().parents[1]


def toy_examples(n_tasks: int = 24, variants: bool = False) -> list[TrainingExample]:
    """Learnable prompt/solution pairs: `add_k(x)` returns x + k."""
    examples = []
    for k in range(n_tasks):
        prompt = f'def add_{k}(x):\n    """Return x plus {k}.\n    >>> add_{k}(1)\n    {1 + k}\n    """\n'
        solution = f"    return x + {k}\n"
        task = f"Toy/{k}"
        examples.append(TrainingExample(task, task, "toy", prompt, solution))
        if variants:
            dropped = prompt.split("    >>>")[0] + '    """\n'
            lineage = (
                {
                    "transform": "drop_examples",
                    "version": "1",
                    "params": {},
                    "seed": 0,
                    "changes": {},
                },
            )
            examples.append(
                TrainingExample(
                    f"{task}::drop_examples",
                    task,
                    "toy",
                    dropped,
                    solution,
                    flavour="A",
                    lineage=lineage,
                )
            )
    return assign_splits(examples, 0.1, seed=0)


def make_tiny_model(folder: Path, corpus: list[str], pad_token: bool = False) -> Path:
    """A 2-layer Llama and a byte-level BPE tokenizer trained on `corpus`, saved as a HF folder."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<eos>"] + (["<pad>"] if pad_token else [])
    tok.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=320,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<eos>", pad_token="<pad>" if pad_token else None
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=256,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def write_toy_run(tmp: Path, examples: list[TrainingExample] | None = None, **config) -> Path:
    """Model folder, data file and YAML config under `tmp`; returns the config path."""
    examples = examples if examples is not None else toy_examples()
    data = tmp / "data.jsonl"
    write_training_examples(data, examples)
    model = tmp / "tiny-model"
    if not model.exists():
        make_tiny_model(model, [e.prompt + e.completion for e in examples])
    values = {
        "model": str(model),
        "data": str(data),
        "output_dir": str(tmp / "run"),
        "learning_rate": 3e-3,
        "batch_size": 4,
        "per_device_batch_size": 2,
        "max_epochs": 3,
        "max_length": 128,
        "patience": 5,
        "seed": 1,
    }
    values.update(config)
    path = tmp / "train.yaml"
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()))
    return path


def run_python(
    args: list[str], timeout: float = 240, env: dict | None = None
) -> subprocess.CompletedProcess:
    full_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=full_env,
    )
