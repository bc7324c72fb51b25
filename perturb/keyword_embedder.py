"""Fine-tune KeyBERT's sentence embedder on code (the paper fine-tuned on CodeParrot).

Training pairs come from Python functions: the first sentence of a docstring and the code
that implements it (signature and body). A contrastive loss (MultipleNegativesRankingLoss)
pulls a description towards its code and away from the other functions in the batch, so the
words of a task description move closer to the identifiers and types that express them.

Corpus: a folder of `.py` files (offline default: this Python's standard library), or a
Hugging Face dataset id with a `content` column of source files (e.g. codeparrot-clean; needs
the hub).
"""

from __future__ import annotations

import ast
import os
import random
import sysconfig
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common.errors import UserError
from benchmarks.common.models import load_sentence_transformer, torch_device

STDLIB = "stdlib"


@dataclass(frozen=True)
class EmbedderFinetuneConfig:
    corpus: str = field(
        default=STDLIB,
        metadata={
            "help": "a folder of .py files, `stdlib` (this Python's standard library), or an HF dataset id"
        },
    )
    base_model: str = field(
        default="embedded",
        metadata={
            "help": "the sentence-transformers model to start from (`embedded` = all-MiniLM-L6-v2)"
        },
    )
    max_pairs: int = field(
        default=4000,
        metadata={"help": "at most this many (docstring, code) pairs, sampled with `seed`"},
    )
    epochs: int = field(default=1, metadata={"help": "passes over the pairs"})
    batch_size: int = field(default=32, metadata={"help": "pairs per training step"})
    learning_rate: float = field(default=2e-5, metadata={"help": "AdamW learning rate"})
    max_code_chars: int = field(
        default=600,
        metadata={
            "help": "code is cut to this many characters (the embedder sees 256 tokens at most anyway)"
        },
    )
    seed: int = field(default=0, metadata={"help": "seed of the pair sample and training"})

    def __post_init__(self) -> None:
        if self.max_pairs < self.batch_size:
            raise UserError(
                f"max_pairs ({self.max_pairs}) must be at least batch_size ({self.batch_size})."
            )


def _functions(source: str) -> Iterator[tuple[str, str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node)
            if not doc or node.name.startswith("__"):
                continue
            sentence = doc.strip().split("\n\n")[0].replace("\n", " ").split(". ")[0].strip()
            if len(sentence.split()) < 4:
                continue
            segment = ast.get_source_segment(source, node)
            if segment:
                yield sentence, segment


def _corpus_files(corpus: str) -> Iterator[str]:
    root = Path(sysconfig.get_paths()["stdlib"]) if corpus == STDLIB else Path(corpus)
    if root.is_dir():
        for path in sorted(root.rglob("*.py")):
            if "test" in path.parts or "site-packages" in path.parts:
                continue
            try:
                yield path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
        return
    if os.sep in corpus or corpus.startswith("."):
        raise UserError(
            f"Corpus folder {corpus} does not exist; pass a folder of .py files, 'stdlib', or a Hugging Face dataset id."
        )
    try:
        from datasets import load_dataset  # heavy; only a hub corpus needs it

        dataset = load_dataset(corpus, split="train", streaming=True)
        for row in dataset:
            yield row["content"]
    except Exception as err:
        raise UserError(
            f"Cannot read the corpus dataset {corpus!r} ({type(err).__name__}); it needs the hub (HF_HUB_OFFLINE=0) and a 'content' column."
        ) from None


def training_pairs(config: EmbedderFinetuneConfig) -> list[tuple[str, str]]:
    """(description sentence, code) pairs from the corpus, deduplicated and sampled."""
    seen, pairs = set(), []
    for source in _corpus_files(config.corpus):
        for sentence, code in _functions(source):
            if sentence not in seen:
                seen.add(sentence)
                pairs.append((sentence, code[: config.max_code_chars]))
        if (
            config.corpus != STDLIB
            and not Path(config.corpus).is_dir()
            and len(pairs) >= config.max_pairs * 4
        ):
            break  # streaming datasets are large; a sample this size is enough to draw from
    if len(pairs) < config.batch_size:
        raise UserError(
            f"The corpus {config.corpus} has only {len(pairs)} documented functions; need at least {config.batch_size}."
        )
    random.Random(config.seed).shuffle(pairs)
    return pairs[: config.max_pairs]


def finetune_embedder(config: EmbedderFinetuneConfig, out_dir: str) -> dict[str, float | int | str]:
    """Fine-tune and save a sentence-transformers folder at `out_dir`; returns a summary."""
    # Heavy (torch underneath), and only training needs them: imported here.
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers import losses as losses  # type: ignore[attr-defined]  # lazy attribute

    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} already exists and is not empty; choose a new --out folder.")
    pairs = training_pairs(config)
    model = load_sentence_transformer(config.base_model)
    dataset = Dataset.from_dict(
        {"anchor": [a for a, _ in pairs], "positive": [p for _, p in pairs]}
    )
    with tempfile.TemporaryDirectory(prefix="boi-embedder-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            num_train_epochs=config.epochs,
            per_device_train_batch_size=config.batch_size,
            learning_rate=config.learning_rate,
            seed=config.seed,
            save_strategy="no",
            report_to=[],
            logging_steps=50,
            use_cpu=torch_device("auto") == "cpu",
        )
        trainer = SentenceTransformerTrainer(
            model=model,
            args=args,
            train_dataset=dataset,
            loss=losses.MultipleNegativesRankingLoss(model),
        )
        result = trainer.train()
        staging = Path(
            tempfile.mkdtemp(
                prefix=".boi-embedder-", dir=out.parent if out.parent.exists() else None
            )
        )
        model.save(str(staging))
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.rmdir()  # empty, checked above
    os.replace(staging, out)
    return {
        "pairs": len(pairs),
        "steps": int(result.global_step),
        "train_loss": round(float(result.training_loss), 4),
        "out": str(out),
    }
