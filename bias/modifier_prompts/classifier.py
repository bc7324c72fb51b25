"""The code bias classifier (Liu et al. section 3.3): P(biased | code), trained on their data.

Two kinds, both starting from the embedded all-MiniLM-L6-v2 encoder (or any BERT-like folder /
HF id given as `base_model`):

- `finetune`: the whole encoder fine-tuned with a 2-way classification head (transformers), as the
  paper fine-tuned BERT-Base. The default: the more accurate of the two
  (docs/reference/bias.md, "The classifier").
- `head`: the frozen sentence embedder plus a logistic-regression head (scikit-learn); trains in
  seconds on a CPU.

The annotated data (`train.jsonl`, `val.jsonl`, `test.jsonl`, one `{"code", "label"}` per line,
label 1 = biased) has no licence, so it is read from where the user keeps it and never copied
into the package: `boi bias train-classifier --data DIR` trains, evaluates on val and test, and
writes the classifier folder (by default into the boi cache, where `boi bias run` looks for it).
The folder's `classifier.json` records kind, config, data hashes, and val/test accuracy with
confusion matrices.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import replace_dir, write_text_atomic
from benchmarks.common.cache import cache_dir
from benchmarks.common.config import to_dict
from benchmarks.common.errors import UserError
from benchmarks.common.jsonl import iter_jsonl, require_fields
from benchmarks.common.models import (
    EMBEDDED_EMBEDDER,
    embedded_embedder_path,
    load_sentence_transformer,
    torch_device,
)
from benchmarks.common.outputs import output_dir
from benchmarks.common.provenance import config_hash, file_sha256, package_versions
from benchmarks.upstream import dataset
from bias.metrics import is_biased

KINDS = ("finetune", "head")
SPLITS = ("train", "val", "test")
RECORD = "classifier.json"


def default_classifier_dir() -> Path:
    """Where `train-classifier` writes and `boi bias run` looks when no path is given."""
    return cache_dir("bias-classifier") / "default"


@dataclass(frozen=True)
class ClassifierConfig:
    """How `boi bias train-classifier` trains the code bias classifier."""

    data: str = field(
        default="",
        metadata={
            "help": "folder with train.jsonl, val.jsonl, test.jsonl ({code, label}; label 1 = "
            "biased), e.g. Liu et al.'s annotated completions"
        },
    )
    kind: str = field(
        default="finetune",
        metadata={
            "help": "finetune (the encoder fine-tuned, most accurate) or head (frozen embedder "
            "+ logistic regression, seconds on a CPU)"
        },
    )
    base_model: str = field(
        default=EMBEDDED_EMBEDDER,
        metadata={
            "help": "encoder to start from: 'embedded' (all-MiniLM-L6-v2), a folder or HF id"
        },
    )
    out: str | None = field(
        default=None,
        metadata={"help": "where to write the classifier (default: the boi cache, used by run)"},
    )
    epochs: int = field(default=3, metadata={"help": "finetune: passes over the training set"})
    learning_rate: float = field(default=5e-5, metadata={"help": "finetune: AdamW learning rate"})
    batch_size: int = field(default=16, metadata={"help": "finetune: examples per step"})
    max_length: int = field(default=128, metadata={"help": "tokens per example (longer is cut)"})
    regularization: float = field(
        default=1.0, metadata={"help": "head: inverse L2 strength C of the logistic regression"}
    )
    seed: int = field(default=0, metadata={"help": "shuffling and head initialisation seed"})
    device: str = field(default="auto", metadata={"help": "auto (cuda if present), cpu or cuda"})

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise UserError(
                f"classifier kind {self.kind!r} is unknown; use one of {', '.join(KINDS)}."
            )
        for name in ("epochs", "batch_size", "max_length"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise UserError(f"classifier {name} must be a positive integer (got {value!r}).")
        if self.learning_rate <= 0 or self.regularization <= 0:
            raise UserError("classifier learning_rate and regularization must be positive.")


@dataclass(frozen=True)
class Example:
    code: str
    label: int


def read_split(path: Path) -> list[Example]:
    """One split: `{code, label}` lines, label 0 or 1; a bad line is a UserError naming it."""
    examples = []
    for lineno, obj in iter_jsonl(path):
        require_fields(
            path,
            lineno,
            obj,
            ("code", "label"),
            what="example",
            needs="each line needs code and label",
        )
        label = obj["label"]
        if label not in (0, 1) or isinstance(label, bool) or not isinstance(obj["code"], str):
            raise UserError(
                f"{path} line {lineno}: label must be 0 or 1 and code a string (got label {label!r})."
            )
        examples.append(Example(obj["code"], int(label)))
    if not examples:
        raise UserError(f"{path} holds no examples; check the file.")
    return examples


def read_data(folder: str) -> dict[str, list[Example]]:
    if not folder:
        raise UserError(
            "no training data given; pass --data DIR, the folder with train.jsonl, val.jsonl and "
            "test.jsonl (Liu et al.'s annotated completions)."
        )
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise UserError(f"classifier data folder {root} does not exist; check the path.")
    missing = [f"{s}.jsonl" for s in SPLITS if not (root / f"{s}.jsonl").is_file()]
    if missing:
        raise UserError(f"{root} has no {', '.join(missing)}; the folder needs all three splits.")
    return {split: read_split(root / f"{split}.jsonl") for split in SPLITS}


# --------------------------------------------------------------------------- evaluation


def evaluate(labels: Sequence[int], probabilities: Sequence[float]) -> dict[str, Any]:
    """Accuracy, precision, recall, F1 and the confusion matrix at P >= 0.5 (label 1 = biased)."""
    # (label, predicted) pairs; the prediction is the verdict CBS counts (bias.metrics).
    pairs = Counter(zip(labels, (int(is_biased(p)) for p in probabilities), strict=True))
    tp, tn, fp, fn = pairs[1, 1], pairs[0, 0], pairs[0, 1], pairs[1, 0]
    n = len(labels)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "examples": n,
        "accuracy": (tp + tn) / n if n else float("nan"),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "confusion": {"tn": tn, "fp": fp, "fn": fn, "tp": tp},
    }


def _evaluation(
    data: dict[str, list[Example]], predict: Callable[[Sequence[str]], list[float]]
) -> dict[str, Any]:
    """Val and test metrics, plus test restricted to code not seen verbatim in train (the
    splits share many identical completions, which flatters accuracy)."""
    seen = {e.code for e in data["train"]}
    out: dict[str, Any] = {}
    for split in ("val", "test"):
        examples = data[split]
        probabilities = predict([e.code for e in examples])
        out[split] = evaluate([e.label for e in examples], probabilities)
        unseen = [i for i, e in enumerate(examples) if e.code not in seen]
        out[split]["unseen_in_train"] = evaluate(
            [examples[i].label for i in unseen], [probabilities[i] for i in unseen]
        )
    return out


# --------------------------------------------------------------------------- classifiers


def _resolve_encoder(base_model: str) -> str:
    return embedded_embedder_path() if base_model == EMBEDDED_EMBEDDER else base_model


class CodeBiasClassifier:
    """A trained classifier folder: `probabilities(codes)` is P(biased) per code."""

    def __init__(self, folder: Path, record: dict[str, Any]) -> None:
        self.folder = folder
        self.record = record
        self.kind = record["kind"]
        self.identity = record["identity"]

    def probabilities(self, codes: Sequence[str], batch_size: int = 32) -> list[float]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        metrics = self.record.get("metrics", {})
        return {
            "path": str(self.folder),
            "kind": self.kind,
            "identity": self.identity,
            "base_model": self.record.get("config", {}).get("base_model"),
            "val_accuracy": metrics.get("val", {}).get("accuracy"),
            "test_accuracy": metrics.get("test", {}).get("accuracy"),
        }


class FinetunedClassifier(CodeBiasClassifier):
    def __init__(self, folder: Path, record: dict[str, Any], device: str = "auto") -> None:
        super().__init__(folder, record)
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.device = torch_device(device)  # `auto` resolved; an absent GPU is one sentence
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder))
        self.model = AutoModelForSequenceClassification.from_pretrained(str(folder))
        self.model.to(self.device)
        self.model.eval()
        self.max_length = int(record["config"]["max_length"])

    def probabilities(self, codes: Sequence[str], batch_size: int = 32) -> list[float]:
        return _finetuned_probabilities(
            self.model, self.tokenizer, codes, self.max_length, self.device, batch_size
        )


class HeadClassifier(CodeBiasClassifier):
    def __init__(self, folder: Path, record: dict[str, Any]) -> None:
        super().__init__(folder, record)
        head = json.loads((folder / "head.json").read_text(encoding="utf-8"))
        self.weights = head["coef"]
        self.bias = head["intercept"]
        self.embedder = load_sentence_transformer(record["config"]["base_model"])

    def probabilities(self, codes: Sequence[str], batch_size: int = 32) -> list[float]:
        import numpy as np

        if not codes:
            return []
        vectors = self.embedder.encode(
            list(codes), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        logits = np.asarray(vectors, dtype=np.float64) @ np.asarray(self.weights) + self.bias
        return [float(p) for p in 1.0 / (1.0 + np.exp(-logits))]


def _finetuned_probabilities(
    model: Any, tokenizer: Any, codes: Sequence[str], max_length: int, device: str, batch_size: int
) -> list[float]:
    import torch

    out: list[float] = []
    with torch.no_grad():
        for start in range(0, len(codes), batch_size):
            batch = tokenizer(
                list(codes[start : start + batch_size]),
                padding=True,
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            ).to(device)
            logits = model(**batch).logits.float()
            out += torch.softmax(logits, dim=-1)[:, 1].tolist()
    return out


def load_classifier(path: str | None = None, device: str = "auto") -> CodeBiasClassifier:
    """The classifier in `path` (default: the one `train-classifier` wrote into the cache)."""
    folder = Path(path).expanduser() if path else default_classifier_dir()
    record_path = folder / RECORD
    if not record_path.is_file():
        # The annotated data is fetched like every dataset boi does not ship: say how.
        hint = (
            "fetch Liu et al.'s annotated data with `boi data fetch code_bias_classifier`, then "
            f"train one with `{dataset('code_bias_classifier').reads}`"
        )
        if path:
            raise UserError(f"classifier path {folder} holds no {RECORD}; {hint}, or fix the path.")
        raise UserError(f"no code bias classifier has been trained on this machine yet; {hint}.")
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise UserError(f"{record_path} is damaged; train the classifier again.") from None
    if record.get("kind") == "finetune":
        return FinetunedClassifier(folder, record, device)
    if record.get("kind") == "head":
        return HeadClassifier(folder, record)
    raise UserError(f"{record_path} names an unknown classifier kind {record.get('kind')!r}.")


# --------------------------------------------------------------------------- training


def _train_head(
    config: ClassifierConfig, data: dict[str, list[Example]], tmp: Path, log: Callable[[str], None]
) -> Callable[[Sequence[str]], list[float]]:
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    embedder = load_sentence_transformer(config.base_model)
    train = data["train"]
    log(f"[train-classifier] embedding {len(train)} training examples ...")
    vectors = embedder.encode(
        [e.code for e in train], batch_size=64, normalize_embeddings=True, show_progress_bar=True
    )
    model = LogisticRegression(C=config.regularization, max_iter=2000, random_state=config.seed)
    model.fit(np.asarray(vectors), [e.label for e in train])
    head = {"coef": model.coef_[0].tolist(), "intercept": float(model.intercept_[0])}
    write_text_atomic(tmp / "head.json", json.dumps(head))

    def predict(codes: Sequence[str]) -> list[float]:
        encoded = embedder.encode(
            list(codes), batch_size=64, normalize_embeddings=True, show_progress_bar=False
        )
        return [float(p) for p in model.predict_proba(np.asarray(encoded))[:, 1]]

    return predict


def _train_finetune(
    config: ClassifierConfig, data: dict[str, list[Example]], tmp: Path, log: Callable[[str], None]
) -> Callable[[Sequence[str]], list[float]]:
    import torch
    from tqdm import tqdm
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    device = torch_device(config.device)
    torch.manual_seed(config.seed)
    where = _resolve_encoder(config.base_model)
    try:
        tokenizer = AutoTokenizer.from_pretrained(where)
        model = AutoModelForSequenceClassification.from_pretrained(where, num_labels=2)
    except (OSError, ValueError) as err:
        raise UserError(
            f"could not load the encoder {config.base_model!r} ({str(err).splitlines()[0]}); pass "
            "'embedded', a BERT-like model folder, or an HF id with network access."
        ) from None
    model.to(device)
    train = data["train"]
    steps_per_epoch = (len(train) + config.batch_size - 1) // config.batch_size
    total = steps_per_epoch * config.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(0.1 * total), total)
    rng = random.Random(config.seed)
    bar = tqdm(total=total, desc="train-classifier", unit="step")
    model.train()
    for epoch in range(config.epochs):
        order = list(range(len(train)))
        rng.shuffle(order)
        for start in range(0, len(order), config.batch_size):
            batch_examples = [train[i] for i in order[start : start + config.batch_size]]
            batch = tokenizer(
                [e.code for e in batch_examples],
                padding=True,
                truncation=True,
                max_length=config.max_length,
                return_tensors="pt",
            ).to(device)
            labels = torch.tensor([e.label for e in batch_examples], device=device)
            loss = model(**batch, labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.4f}")
    bar.close()
    model.eval()
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))

    def predict(codes: Sequence[str]) -> list[float]:
        return _finetuned_probabilities(model, tokenizer, codes, config.max_length, device, 64)

    return predict


def _folder_identity(folder: Path) -> str:
    digest = [
        f"{p.name}:{file_sha256(p)}"
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name != RECORD
    ]
    return config_hash(digest)


def train_classifier(
    config: ClassifierConfig, log: Callable[[str], None] = print
) -> tuple[Path, dict[str, Any]]:
    """Train, evaluate on val and test, and write the classifier folder atomically.

    Returns (folder, its record). The record holds the metrics the docs and closing notes
    quote, with the data files' hashes so a number can be traced to its data.
    """
    data = read_data(config.data)
    # The folder is replaced as a whole at the end, so it must be ours (a classifier this wrote)
    # or new, and must not hold the training data.
    final = output_dir(
        config.out or default_classifier_dir(),
        option="--out",
        ours=(RECORD,),
        inputs=[config.data],
        replaced=True,
    )
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    started = time.perf_counter()
    try:
        train = _train_finetune if config.kind == "finetune" else _train_head
        predict = train(config, data, tmp, log)
        trained_s = time.perf_counter() - started
        metrics = _evaluation(data, predict)
        root = Path(config.data).expanduser()
        record = {
            "kind": config.kind,
            "config": to_dict(config),
            "data": {
                split: {
                    "path": str(root / f"{split}.jsonl"),
                    "sha256": file_sha256(root / f"{split}.jsonl"),
                    "examples": len(data[split]),
                    "biased": sum(e.label for e in data[split]),
                }
                for split in SPLITS
            },
            "metrics": metrics,
            "paper": {"model": "BERT-Base", "val_accuracy": 0.9547, "test_accuracy": 0.9605},
            "train_seconds": round(trained_s, 1),
            "versions": package_versions(),
            "identity": _folder_identity(tmp),
        }
        write_text_atomic(tmp / RECORD, json.dumps(record, indent=2))
        replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final, record


def metrics_table(record: dict[str, Any]) -> str:
    """The record's val/test numbers beside the paper's, as Markdown."""
    metrics = record["metrics"]
    lines = [
        "| split | examples | accuracy | paper (BERT-Base) | precision | recall | F1 | TN | FP | FN | TP | accuracy on code unseen in train (n) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for split in ("val", "test"):
        m = metrics[split]
        c = m["confusion"]
        unseen = m["unseen_in_train"]
        paper = record["paper"][f"{split}_accuracy"]
        lines.append(
            f"| {split} | {m['examples']} | {100 * m['accuracy']:.2f} | {100 * paper:.2f} | "
            f"{100 * m['precision']:.2f} | {100 * m['recall']:.2f} | {100 * m['f1']:.2f} | "
            f"{c['tn']} | {c['fp']} | {c['fn']} | {c['tp']} | "
            f"{100 * unseen['accuracy']:.2f} ({unseen['examples']}) |"
        )
    return "\n".join(lines)
