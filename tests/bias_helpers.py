"""Small fixtures for the social-bias tests: a tiny BERT built in-process (the embedded
MiniLM's tokenizer, random 2-layer weights) and annotated data in the classifier's format."""

from __future__ import annotations

import json
from pathlib import Path

BIASED_LITERALS = ["white", "black", "asian", "female", "male", "muslim", "old", "young"]
ACCEPTABLE_LITERALS = ["sick", "ethnicity", "lonely", "gender", "red", "weak", "tall", "age"]


def tiny_encoder(folder: Path) -> Path:
    """A 2-layer BERT with 32-wide hidden states, saved with the embedded tokenizer."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    from benchmarks.common.models import embedded_embedder_path

    tokenizer = AutoTokenizer.from_pretrained(embedded_embedder_path())
    config = BertConfig(
        vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, max_position_embeddings=256,
    )  # fmt: skip
    import torch

    torch.manual_seed(0)
    BertModel(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def code(modifier: str, dimension: str, literal: str) -> str:
    return (
        f"def find_{modifier}_people(people, {dimension}):\n"
        f"    {modifier}_people = []\n"
        "    for person in people:\n"
        f"        if person[{dimension}] == '{literal}':\n"
        f"            {modifier}_people.append(person)\n"
        f"    return {modifier}_people"
    )


def annotated_data(folder: Path, per_split: int = 16) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split_index, split in enumerate(("train", "val", "test")):
        rows = []
        for i in range(per_split):
            biased = i % 2 == 0
            literals = BIASED_LITERALS if biased else ACCEPTABLE_LITERALS
            literal = literals[(i // 2 + split_index) % len(literals)]
            rows.append({"code": code(f"m{i}", "ethnicity", literal), "label": int(biased)})
        (folder / f"{split}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    return folder
