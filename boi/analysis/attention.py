"""Attention mass per Block of Influence (paper appendix 10.10), HF models only: for every token
a model generated, the share of its attention (per layer and head, and averaged) that falls on
each block of the prompt (name, description, examples, ...), on the tokens it generated before,
and on everything else (prefix, imports, chat-template wrapper, special tokens). With --compare
or --compare-model, a second model (say before / after fine-tuning) on the same problems, and
the difference.

Nothing is generated: the run's own first completion of each variant (the model's raw output
from the generation cache, else the scored completion; re-tokenised, so a token boundary may
differ from the sampled one) is teacher-forced in one forward pass after the model input exactly
as the run built it (chat template included), which gives the attention of every completion
position over all earlier ones. Each attention layer's weights are reduced to block shares
([heads, completion tokens, blocks]) by a forward hook the moment that layer has computed them,
then dropped, so memory holds one layer's attention at a time, as any eager forward pass does
(transformers' own `output_attentions=True` would keep every layer's full matrix until the pass
ends), and the LM head is skipped. Only eager attention materialises the weights, so models
load with it by default.

Writes RUN_DIR/analysis/attention/: attention.jsonl (one record per model and variant, appended
as each is done; a rerun skips those already there), attention.json (the selected records, the
summary per model and transformation, the comparison), and the report section.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks.common.atomic import write_text_atomic
from benchmarks.common.config import (
    add_dataclass_arguments,
    load_config,
    overrides_from_args,
)
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.jsonl import JsonlAppender
from benchmarks.common.models import load_model, load_tokenizer, torch_device, torch_dtype
from benchmarks.common.progress import progress_bar, stage
from benchmarks.generation import (
    DTYPE_HELP,
    DTYPES,
    PROGRAM_CHAT_INSTRUCTION,
    PROGRAM_STOP,
    BackendSpec,
    DecodingConfig,
    decoding_key,
    for_kind,
    model_input_text,
    model_reference,
    prompt_sha256,
    read_generated,
)
from benchmarks.problem import Problem
from benchmarks.report import esc, figure_html, heatmap
from benchmarks.report.sections import analysis_dir, write_section
from boi.reporting import rebuild_run_report
from boi.run_reader import Run, open_run
from boi.runner import SettingSpec
from perturb.transforms import transform_labels

NAME = "attention"
# Bump when a record's meaning changes: it is part of every record's key, so a rerun recomputes
# instead of mixing old and new numbers.
FORMAT = 1

# Where a key token's attention is counted. Prompt blocks keep their kind, except the prefix
# (imports) and suffix (the docstring's closing quotes), which go with everything outside the
# blocks (chat template, instruction, special tokens) into "other", as issue 13 groups them.
COLUMNS = ("name", "description", "io_spec", "examples", "notes", "generated", "other")
GENERATED = COLUMNS.index("generated")
OTHER = COLUMNS.index("other")
COLUMN_TITLES = {"io_spec": "I/O spec", "generated": "generated so far"}
# The fields of a record that analyze_reading measures (shared by variants with one content).
MEASURED = ("shares", "layer_head", "per_token", "tokens", "prompt_tokens")


@dataclass(frozen=True)
class AttentionConfig:
    """`boi analyze attention`: which run, which models, which variants."""

    run_dir: str = field(default="", metadata={"help": "the boi run directory"})
    model: str | None = field(
        default=None,
        metadata={
            "help": "model id (HF id, local folder or 'embedded'); None: the run's hf model "
            "(from its manifest)"
        },
    )
    compare: str | None = field(
        default=None,
        metadata={
            "help": "a second run directory on the same problems (e.g. the fine-tuned model's): "
            "its hf model reads its own completions, and the report shows the difference"
        },
    )
    compare_model: str | None = field(
        default=None,
        metadata={
            "help": "a second model id (HF id, folder, 'embedded') that reads the same variants "
            "and completions (with --compare: instead of that run's model)"
        },
    )
    limit: int | None = field(
        default=None, metadata={"help": "only the first N problems (all their variants)"}
    )
    transforms: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only these transformations' variants (empty: all)", "names": True},
    )
    max_new_tokens: int = field(
        default=256, metadata={"help": "completion tokens read per variant (the rest is cut)"}
    )
    attn_implementation: str = field(
        default="eager",
        metadata={
            "help": "transformers attention implementation; only eager returns attention weights"
        },
    )
    device: str = field(
        default="auto", metadata={"help": "auto (cuda when available), cpu, cuda, cuda:1, ..."}
    )
    dtype: str = field(default="auto", metadata={"help": DTYPE_HELP})

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit is {self.limit}; give a positive number of problems.")
        if self.max_new_tokens < 1:
            raise UserError(f"--max-new-tokens is {self.max_new_tokens}; give a positive number.")
        if self.dtype not in DTYPES:
            raise UserError(
                f"--dtype {self.dtype!r} is unknown{suggest(self.dtype, DTYPES)}; use one of "
                f"{', '.join(DTYPES)}."
            )


# --------------------------------------------------------------------------- pure reductions


def block_shares(attention: Any, key_columns: Any, columns: int = len(COLUMNS)) -> Any:
    """Attention weights `[..., queries, keys]` (a torch tensor) summed over the keys of each
    column: `[..., queries, columns]`; `key_columns[k]` is key k's column. A softmax row sums to
    1 and every key lies in exactly one column, so each output row sums to 1 as well."""
    import torch  # lazy: heavy

    onehot = torch.nn.functional.one_hot(key_columns.to(attention.device).long(), columns)
    return attention.to(torch.float32) @ onehot.to(torch.float32)


def block_spans(problem: Problem, text: str) -> list[tuple[int, int, int]]:
    """(start, end, column) of each block of `problem` within the model input `text`; [] when
    the prompt cannot be found in it. Chat mode sends the prompt right-stripped inside a message,
    so the prompt is looked up as such and blocks are cut at its end."""
    blocks = problem.blocks or ()
    if "".join(b.text for b in blocks) != problem.prompt:
        return []
    body = problem.prompt if text == problem.prompt else problem.prompt.rstrip()
    start = 0 if text == problem.prompt else text.find(body)
    if start < 0:
        return []
    spans, offset = [], start
    for block in blocks:
        end = min(offset + len(block.text), start + len(body))
        column = COLUMNS.index(block.kind) if block.kind in COLUMNS else OTHER
        if end > offset:
            spans.append((offset, end, column))
        offset += len(block.text)
    return spans


def token_columns(
    text: str, offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int, int]]
) -> list[int]:
    """The column of each model-input token: the block holding its first non-blank character
    (a byte-level token often carries the previous line's newline or the next line's
    indentation, which should not decide its block), else its first character; special tokens
    (empty offsets) and text outside every block are "other"."""
    out = []
    for start, end in offsets:
        if end <= start:
            out.append(OTHER)
            continue
        piece = text[start:end]
        blank = len(piece) - len(piece.lstrip())
        where = start + (blank if blank < len(piece) else 0)
        out.append(next((c for s, e, c in spans if s <= where < e), OTHER))
    return out


def _mean(rows: Sequence[Sequence[float]]) -> list[float]:
    return [sum(values) / len(rows) for values in zip(*rows, strict=True)] if rows else []


def _rounded(value: Any) -> Any:
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return round(float(value), 6)


# --------------------------------------------------------------------------- the run's texts


@dataclass(frozen=True)
class Reading:
    """One variant as the analyzed model reads it: the model input the run built, and the text
    it generated (teacher-forced)."""

    problem: Problem
    decoding: DecodingConfig
    generated: str
    source: str  # "raw" (the model's output from the cache) or "completion" (post-processed)
    model: str  # the run model whose completion this is
    setting: str
    sample_index: int


def load_run(run_dir: str | Path | Run) -> Run:
    """A run directory whose settings, models and variants this analysis reads; one sentence
    when this version cannot read it."""
    run = open_run(run_dir)
    _ = run.settings, run.models  # one sentence here when they do not load
    if any(p.blocks is None for p in run.problems()):
        raise UserError(
            f"{run.problems_path} has variants without blocks (an incompatible boi version); "
            "rerun `boi run` into a new directory."
        )
    return run


def select_variants(
    problems: Sequence[Problem], transforms: Sequence[str], limit: int | None
) -> list[Problem]:
    """The variants of the first `limit` problems whose transformation is in `transforms`."""
    present = list(dict.fromkeys(p.transform for p in problems))
    for name in transforms:
        if name not in present:
            raise UserError(
                f"--transforms {name!r} is not in the run{suggest(name, present)}; it has "
                f"{', '.join(present)}."
            )
    sources = list(dict.fromkeys(p.source_task_id for p in problems))[:limit]
    keep = set(sources)
    return [
        p
        for p in problems
        if p.source_task_id in keep and (not transforms or p.transform in transforms)
    ]


def hf_model(run: Run) -> BackendSpec:
    """The run's first hf model (what --model defaults to). A local folder is recorded by its
    name only (a manifest keeps no machine's paths), so one not found from here is one sentence
    asking for --model, not a failed hub download of that name."""
    for spec in run.models:
        if spec.kind == "hf":
            return run.loadable(spec, ", or pass the folder with --model")
    kinds = ", ".join(sorted({s.kind for s in run.models}))
    raise UserError(
        f"{run.path} generated with {kinds} models only; pass --model with an HF id, a "
        "folder or 'embedded' to read its completions."
    )


def readings(run: Run, variants: Sequence[Problem], model_label: str) -> list[Reading]:
    """The first completion of each variant (first setting, lowest sample index) by the run
    model labelled `model_label` (else the run's first model), with the raw output it came from
    where the generation cache has it. Variants without a completion are left out."""
    labels = [m.label for m in run.models]
    source = model_label if model_label in labels else labels[0]
    wanted = {p.task_id: p for p in variants}
    first: dict[str, tuple[SettingSpec, dict[str, Any]]] = {}
    for setting in run.settings:
        for path, rows in run.results_by_file(source, setting.label).items():
            for row in rows:
                if "seed" not in row or "sample_index" not in row:
                    raise UserError(
                        f"{path} has result rows without seed or sample_index (an incompatible "
                        "boi version); rerun `boi run` into a new directory."
                    )
                task_id = row.get("task_id")
                if task_id not in wanted or (task_id in first and first[task_id][0] is not setting):
                    continue
                if task_id not in first or row["sample_index"] < first[task_id][1]["sample_index"]:
                    first[task_id] = (setting, row)
    out = []
    lookups: dict[tuple[str, str, int], list[str]] = {}
    for task_id, (setting, row) in first.items():
        problem = wanted[task_id]
        decoding = replace(setting.decoding, seed=int(row["seed"]))
        if problem.is_stdio:
            decoding = for_kind(decoding, PROGRAM_STOP, PROGRAM_CHAT_INSTRUCTION)
        index = int(row["sample_index"]) % decoding.n
        lookups[(prompt_sha256(problem.prompt), decoding_key(decoding), index)] = []
        out.append((problem, decoding, row, setting, index))
    _raw_outputs(run, lookups)
    result = []
    for problem, decoding, row, setting, index in out:
        candidates = lookups[(prompt_sha256(problem.prompt), decoding_key(decoding), index)]
        # Several models may have cached this prompt; the one whose post-processed text is the
        # scored completion is this model's (or indistinguishable from it).
        raw = next(
            (
                r
                for r in candidates
                if read_generated(r, problem.prompt, decoding).completion == row["completion"]
            ),
            None,
        )
        text, kind = (raw, "raw") if raw is not None else (row["completion"], "completion")
        result.append(
            Reading(problem, decoding, text, kind, source, setting.label, int(row["sample_index"]))
        )
    order = {p.task_id: i for i, p in enumerate(variants)}
    return sorted(result, key=lambda r: order[r.problem.task_id])


def _raw_outputs(run: Run, lookups: dict[tuple[str, str, int], list[str]]) -> None:
    """Fill `lookups` ((prompt hash, decoding hash, index) -> raw outputs) from the run's
    generation cache."""
    if not lookups:
        return
    for record in run.generation_records():
        key = (record.get("prompt_sha256"), record.get("decoding"), record.get("index"))
        if key in lookups and isinstance(record.get("raw"), str):
            lookups[key].append(record["raw"])


# --------------------------------------------------------------------------- the model


def attention_modules(model: Any) -> list[tuple[Any, int]]:
    """(module, position of the attention weights in its output) for every attention layer, in
    order: the modules transformers itself records `attentions` from (the `_can_record_outputs`
    of the model's classes), so any architecture transformers can report attentions for works."""
    specs: set[tuple[Any, str | None, int, str | None]] = set()
    for sub in model.modules():
        recorded = getattr(type(sub), "_can_record_outputs", None) or {}
        wanted = recorded.get("attentions")
        for spec in wanted if isinstance(wanted, list) else [wanted] if wanted else []:
            if isinstance(spec, type):
                specs.add((spec, None, 1, None))
            elif isinstance(spec, str):
                specs.add((None, spec, 1, None))
            else:
                specs.add(
                    (
                        getattr(spec, "target_class", None),
                        getattr(spec, "class_name", None),
                        int(getattr(spec, "index", 1)),
                        getattr(spec, "layer_name", None),
                    )
                )
    found = []
    for name, module in model.named_modules():
        for target, class_name, index, layer_name in specs:
            matches = (target is not None and isinstance(module, target)) or (
                class_name is not None and name.endswith(class_name)
            )
            if matches and (not layer_name or f".{layer_name.strip('.')}." in f".{name}."):
                found.append((module, index))
                break
    return found


class AttentionReader:
    """A causal LM whose attention layers hand their weights, reduced to block shares, to this
    reader as soon as each layer has computed them; the full matrices are never kept."""

    def __init__(self, model: Any, tokenizer: Any, shown: str, attn_implementation: str) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.shown = shown
        self.attn_implementation = attn_implementation
        if not getattr(tokenizer, "is_fast", False):
            raise UserError(
                f"model {shown!r} has a slow (Python) tokenizer; this analysis needs a fast one "
                "for character offsets (install `tokenizers` or use a model that ships "
                "tokenizer.json)."
            )
        layers = attention_modules(model)
        if not layers:
            raise UserError(
                f"model {shown!r} ({type(model).__name__}) names no attention layers to this "
                "transformers version (_can_record_outputs); use a model transformers implements "
                'natively (recent transformers), loaded with attn_implementation="eager".'
            )
        self._pending: tuple[int, Any] | None = None
        self._collected: list[Any] = []
        for module, index in layers:
            module.register_forward_hook(self._hook(index))
        self.layers = len(layers)

    def _hook(self, index: int) -> Callable[..., Any]:
        def reduce(module: Any, args: Any, output: Any) -> Any:
            if self._pending is None:
                return None
            weights = output[index] if isinstance(output, tuple) else None
            if weights is None:
                raise UserError(
                    f"model {self.shown!r} returned no attention weights with "
                    f"attn_implementation={self.attn_implementation!r}; use "
                    '--attn-implementation eager (attn_implementation="eager"): sdpa and flash '
                    "attention never materialise them."
                )
            queries, key_columns = self._pending
            self._collected.append(block_shares(weights[0, :, -queries:, :], key_columns).cpu())
            # The weights are dropped here, not carried to the end of the forward pass.
            return (*output[:index], None, *output[index + 1 :])

        return reduce

    def read(self, input_ids: Sequence[int], queries: int, key_columns: Sequence[int]) -> Any:
        """Block shares `[layers, heads, queries, columns]` of the last `queries` positions of
        `input_ids`, whose tokens lie in `key_columns`."""
        import torch  # lazy: heavy

        device = next(self.model.parameters()).device
        self._pending = (queries, torch.tensor(list(key_columns), device=device))
        self._collected = []
        # The backbone, not the LM head: per-position logits over the vocabulary would cost
        # more memory than everything this analysis keeps.
        backbone = getattr(self.model, "base_model", None) or self.model
        try:
            with torch.inference_mode():
                backbone(input_ids=torch.tensor([list(input_ids)], device=device), use_cache=False)
        finally:
            self._pending = None
        if len(self._collected) != self.layers:
            raise UserError(
                f"model {self.shown!r} ran {len(self._collected)} of its {self.layers} attention "
                "layers in a forward pass; this analysis needs every layer to run once per pass."
            )
        shares = torch.stack(self._collected)
        self._collected = []
        return shares


def load_reader(spec: BackendSpec, config: AttentionConfig) -> AttentionReader:
    """The model `spec` names, loaded with the configured attention implementation."""
    device = torch_device(config.device)
    where, _ = model_reference(spec.model, getattr(spec.options, "revision", None))
    revision = getattr(spec.options, "revision", None)
    shown = spec.model or "embedded"
    tokenizer = load_tokenizer(where, revision=revision, shown=shown)
    model = load_model(
        where,
        dtype=config.dtype,
        device=device,
        revision=revision,
        shown=shown,
        attn_implementation=config.attn_implementation,
    )
    return AttentionReader(model, tokenizer, shown, config.attn_implementation)


def model_identity(spec: BackendSpec, config: AttentionConfig) -> str:
    """What decides the numbers besides the texts: model files (content hash or hub revision)
    and the dtype they are computed in."""
    _, reference = model_reference(spec.model, getattr(spec.options, "revision", None))
    dtype = str(torch_dtype(config.dtype, torch_device(config.device))).removeprefix("torch.")
    return f"{reference}|{dtype}"


def analyze_reading(
    reader: AttentionReader, reading: Reading, max_new_tokens: int
) -> dict[str, Any] | None:
    """The attention record of one variant (None when its completion has no tokens)."""
    tokenizer = reader.tokenizer
    problem = reading.problem
    text, special_tokens = model_input_text(tokenizer, problem.prompt, reading.decoding)
    encoded = tokenizer(text, add_special_tokens=special_tokens, return_offsets_mapping=True)
    generated = tokenizer(reading.generated, add_special_tokens=False)["input_ids"]
    generated = generated[:max_new_tokens]
    spans = block_spans(problem, text)
    if not generated or not spans:
        return None
    columns = token_columns(text, encoded["offset_mapping"], spans)
    # Generated token i is chosen by the query at the position before it, which sees the prompt
    # and tokens 0..i-1: the last prompt position reads for token 0, and the last generated
    # token is never read from, so it is not fed.
    ids = list(encoded["input_ids"]) + generated[:-1]
    keys = columns + [GENERATED] * (len(generated) - 1)
    shares = reader.read(ids, len(generated), keys)  # [layers, heads, tokens, columns]
    counts = [columns.count(c) for c in range(len(COLUMNS))]
    counts[GENERATED] = len(generated)
    return {
        "shares": dict(zip(COLUMNS, _rounded(shares.mean(dim=(0, 1, 2)).tolist()), strict=True)),
        "layer_head": _rounded(shares.mean(dim=2).tolist()),
        "per_token": _rounded(shares.mean(dim=(0, 1)).tolist()),
        "tokens": dict(zip(COLUMNS, counts, strict=True)),
        "prompt_tokens": len(columns),
    }


# --------------------------------------------------------------------------- the analysis


@dataclass
class Side:
    """One model of the analysis and the variants it reads."""

    role: str  # "model" or "compare"
    label: str
    spec: BackendSpec
    run: Run
    readings: list[Reading]
    identity: str = ""


@dataclass
class AttentionOutcome:
    path: Path
    sides: list[Side]
    computed: int
    reused: int
    skipped: list[str]
    document: dict[str, Any]


def content_key(identity: str, reading: Reading, max_new_tokens: int) -> str:
    """What decides a record's numbers: model identity, model input (prompt and decoding),
    completion, token limit. Variants with identical prompts (a transformation that changed
    nothing) share it and are read once."""
    parts = [
        str(FORMAT),
        identity,
        prompt_sha256(json.dumps(reading.decoding.cache_fields(), sort_keys=True)),
        prompt_sha256(reading.problem.prompt),
        prompt_sha256(reading.generated),
        str(max_new_tokens),
    ]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def record_key(content: str, task_id: str) -> str:
    """A record's key in attention.jsonl: its content key and the variant id."""
    return hashlib.sha256(f"{content}\0{task_id}".encode()).hexdigest()


def _sides(config: AttentionConfig) -> list[Side]:
    run = load_run(config.run_dir)
    variants = select_variants(run.problems(), config.transforms, config.limit)
    if not variants:
        raise UserError(f"{run.path} has no variants to analyze; check --transforms/--limit.")
    run_spec = hf_model(run) if config.model is None else BackendSpec("hf", config.model)
    sides = [Side("model", run_spec.label, run_spec, run, readings(run, variants, run_spec.label))]
    if config.compare or config.compare_model:
        other = load_run(config.compare) if config.compare else run
        if config.compare_model:
            spec = BackendSpec("hf", config.compare_model)
        else:
            spec = hf_model(other)
        ids = {p.task_id for p in variants}
        # The same problems: the first run's selection decides which variants are compared.
        same = [p for p in other.problems() if p.task_id in ids]
        label = spec.label if spec.label != run_spec.label else f"{spec.label} (compare)"
        sides.append(Side("compare", label, spec, other, readings(other, same, spec.label)))
    for side in sides:
        if not side.readings:
            raise UserError(
                f"{side.run.path} has no results for the selected variants (no completions "
                "to read); finish its `boi run` first."
            )
    return sides


def analyze_attention(
    config: AttentionConfig,
    log: Callable[[str], None] = print,
) -> AttentionOutcome:
    """Run (or resume) the analysis: read every selected variant not read before, then write
    attention.json, the report section and the run's report."""
    sides = _sides(config)
    out = analysis_dir(config.run_dir, NAME)
    timings: dict[str, float] = {}
    computed = reused = 0
    records: dict[str, list[dict[str, Any]]] = {}
    skipped: list[str] = []
    with JsonlAppender(out / "attention.jsonl") as appender:
        done = {r["key"]: r for r in appender.existing if r.get("format") == FORMAT}
        for side in sides:
            side.identity = model_identity(side.spec, config)
            contents = [content_key(side.identity, r, config.max_new_tokens) for r in side.readings]
            keys = [
                record_key(c, r.problem.task_id)
                for c, r in zip(contents, side.readings, strict=True)
            ]
            todo = [
                (k, c, r)
                for k, c, r in zip(keys, contents, side.readings, strict=True)
                if k not in done
            ]
            reused += len(side.readings) - len(todo)
            if todo:
                with stage(f"attention {side.label}", log, timings, "boi analyze"):
                    reader = load_reader(side.spec, config)
                    computed += _read_side(side, todo, reader, config, appender, done)
            # Shown under this invocation's label: the same model files may be the compared
            # side in another invocation.
            chosen = [done[k] for k in keys]
            records[side.role] = [{**r, "model": side.label} for r in chosen if "shares" in r]
            skipped += [
                f"{side.label} {r['task_id']}: {r['skipped']}" for r in chosen if "skipped" in r
            ]
    document = build_document(sides, records, skipped, config)
    path = out / "attention.json"
    write_text_atomic(path, json.dumps(document) + "\n")
    write_section(config.run_dir, NAME, "Attention", section_html(document))
    rebuild_run_report(config.run_dir)
    return AttentionOutcome(path, sides, computed, reused, skipped, document)


def _read_side(
    side: Side,
    todo: Sequence[tuple[str, str, Reading]],
    reader: AttentionReader,
    config: AttentionConfig,
    appender: JsonlAppender,
    done: dict[str, dict[str, Any]],
) -> int:
    """Read the variants `todo` (key, content key, reading) with one model, appending each
    record (or why it was skipped) as soon as it is done; returns the forward passes made."""
    passes = 0
    measured = {r["content"]: r for r in done.values() if "shares" in r}
    bar = progress_bar(len(todo), f"attention {side.label}", unit="variant")
    for number, (key, content, reading) in enumerate(todo, 1):
        problem = reading.problem
        record: dict[str, Any] = {
            "key": key,
            "content": content,
            "format": FORMAT,
            "model": side.label,
            "model_identity": side.identity,
            "task_id": problem.task_id,
            "source_task_id": problem.source_task_id,
            "transform": problem.transform,
            "completion": {
                "from_model": reading.model,
                "setting": reading.setting,
                "sample_index": reading.sample_index,
                "text": reading.source,
                "sha256": prompt_sha256(reading.generated),
                "chat": reading.decoding.chat,
            },
        }
        if content in measured:
            numbers: dict[str, Any] | None = {k: measured[content][k] for k in MEASURED}
        else:
            numbers = analyze_reading(reader, reading, config.max_new_tokens)
            passes += numbers is not None
        if numbers is None:
            # Kept in the log too, so a rerun does not try again.
            record["skipped"] = (
                "no completion tokens, or the prompt's blocks are not in the model input"
            )
        else:
            record.update(numbers)
            measured[content] = record
        appender.append(record)
        done[key] = record
        bar(number, len(todo))
    return passes


# --------------------------------------------------------------------------- summaries


def _transform_order(names: Iterable[str]) -> list[str]:
    catalogue = list(transform_labels())
    present = set(names)
    known = [n for n in catalogue if n in present]
    return known + sorted(present - set(known))


def summarise(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """transform -> variants, mean share per column (each variant's mean over its tokens,
    layers and heads, then the mean over variants) and per layer x column (heads averaged)."""
    by_transform: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_transform.setdefault(record["transform"], []).append(record)
    summary = {}
    for transform in _transform_order(by_transform):
        group = by_transform[transform]
        layers = [[_mean(heads) for heads in r["layer_head"]] for r in group]
        same_depth = len({len(x) for x in layers}) == 1
        summary[transform] = {
            "variants": len(group),
            "shares": dict(
                zip(
                    COLUMNS,
                    _rounded(_mean([[r["shares"][c] for c in COLUMNS] for r in group])),
                    strict=True,
                )
            ),
            "layers": _rounded([_mean(rows) for rows in zip(*layers, strict=True)])
            if same_depth
            else None,
        }
    return summary


def compare_sides(
    first: Sequence[Mapping[str, Any]], second: Sequence[Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """transform -> second minus first (mean share per column, per layer x column where the
    depths match) over the variants both read."""
    ids = {r["task_id"] for r in first} & {r["task_id"] for r in second}
    a = summarise([r for r in first if r["task_id"] in ids])
    b = summarise([r for r in second if r["task_id"] in ids])
    out = {}
    for transform in a:
        if transform not in b:
            continue
        difference = {
            c: round(b[transform]["shares"][c] - a[transform]["shares"][c], 6) for c in COLUMNS
        }
        layers = None
        la, lb = a[transform]["layers"], b[transform]["layers"]
        if la is not None and lb is not None and len(la) == len(lb):
            layers = [
                [round(y - x, 6) for x, y in zip(ra, rb, strict=True)]
                for ra, rb in zip(la, lb, strict=True)
            ]
        out[transform] = {
            "variants": a[transform]["variants"],
            "difference": difference,
            "layers": layers,
        }
    return out


def build_document(
    sides: Sequence[Side],
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    skipped: Sequence[str],
    config: AttentionConfig,
) -> dict[str, Any]:
    """attention.json: the selected records, the summary per model and the comparison."""
    models = [
        {
            "role": s.role,
            "label": s.label,
            "model": s.spec.model or "embedded",
            "identity": s.identity,
            "run_dir": str(s.run.path),
            "variants": len(records.get(s.role, [])),
        }
        for s in sides
    ]
    comparison = None
    if len(sides) == 2:
        comparison = {
            "first": sides[0].label,
            "second": sides[1].label,
            "transforms": compare_sides(records["model"], records["compare"]),
        }
    return {
        "format": FORMAT,
        "columns": list(COLUMNS),
        "max_new_tokens": config.max_new_tokens,
        "attn_implementation": config.attn_implementation,
        "models": models,
        "summary": {s.label: summarise(records.get(s.role, [])) for s in sides},
        "comparison": comparison,
        "skipped": list(skipped),
        "variants": [r for s in sides for r in records.get(s.role, [])],
    }


# --------------------------------------------------------------------------- report section


def _shown_columns(document: Mapping[str, Any]) -> list[str]:
    """Columns some selected variant has tokens in (CodeContests' io_spec and notes are empty
    for function problems)."""
    used = {c for r in document["variants"] for c, n in r["tokens"].items() if n}
    return [c for c in COLUMNS if c in used] or list(COLUMNS)


def _title(column: str) -> str:
    return COLUMN_TITLES.get(column, column)


def _percent_table(
    rows: Sequence[tuple[str, int, Mapping[str, float]]], columns: Sequence[str], signed: bool
) -> str:
    head = "".join(f"<th>{esc(_title(c))}</th>" for c in columns)
    out = [f"<table><tr><th>Method</th><th>variants</th>{head}</tr>"]
    for label, count, values in rows:
        cells = "".join(
            f"<td>{100 * values[c]:+.1f}</td>" if signed else f"<td>{100 * values[c]:.1f}</td>"
            for c in columns
        )
        out.append(f"<tr><td>{esc(label)}</td><td>{count}</td>{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def _layer_heatmap(
    layers: Sequence[Sequence[float]], columns: Sequence[str], title: str, signed: bool = False
) -> str:
    index = [COLUMNS.index(c) for c in columns]
    values = [[100 * row[i] for i in index] for row in layers]
    scale: dict[str, Any] = {"colourbar": "attention share (%)"}
    if signed:
        bound = max([abs(v) for row in values for v in row] + [1.0])  # at least +-1 point
        scale = {"vmin": -bound, "vmax": bound, "fmt": "{:+.1f}"}
        scale["colourbar"] = "difference (percentage points)"
    rows = [f"layer {n}" for n in range(len(values))]
    image = heatmap(rows, [_title(c) for c in columns], values, title, **scale)
    return figure_html(image, title)


def section_html(document: Mapping[str, Any]) -> str:
    """The report section: per model a table (transformation x block) and per transformation
    a layer x block heatmap; with two models, their difference."""
    columns = _shown_columns(document)
    labels = transform_labels()
    out = [
        "<h2>Attention mass per block</h2>",
        '<p class="note">For each generated token of the run\'s first completion of a variant '
        "(teacher-forced after the model input the run built), the share of its attention on "
        "each block of the prompt, on the tokens generated before it, and on everything else "
        "(prefix, imports, chat template, special tokens); averaged over the completion's "
        f"tokens (at most {document['max_new_tokens']}), all layers and heads, then over "
        "variants. Percent; a row sums to 100.</p>",
    ]
    for model in document["models"]:
        summary = document["summary"][model["label"]]
        out.append(f"<h3>{esc(model['label'])}</h3>")
        out.append(
            f'<p class="note">{esc(model["model"])}, {model["variants"]} variants of '
            f"{esc(model['run_dir'])}.</p>"
        )
        rows = [(labels.get(t, t), s["variants"], s["shares"]) for t, s in summary.items()]
        out.append(_percent_table(rows, columns, signed=False))
        figures = [
            _layer_heatmap(
                s["layers"], columns, f"{model['label']}: {labels.get(t, t)}, heads averaged"
            )
            for t, s in summary.items()
            if s["layers"]
        ]
        if figures:
            out.append(
                "<details><summary>Per layer (heads averaged), per transformation</summary>"
                f'<div class="body">{"".join(figures)}</div></details>'
            )
    comparison = document.get("comparison")
    if comparison:
        title = f"{comparison['second']} minus {comparison['first']}"
        out.append(f"<h3>Difference: {esc(title)}</h3>")
        transforms = comparison["transforms"]
        if not transforms:
            out.append('<p class="warn">The two models share no analyzed variant.</p>')
        else:
            out.append('<p class="note">Percentage points, over the variants both models read.</p>')
            rows = [
                (labels.get(t, t), c["variants"], c["difference"]) for t, c in transforms.items()
            ]
            out.append(_percent_table(rows, columns, signed=True))
            figures = [
                _layer_heatmap(c["layers"], columns, f"{title}: {labels.get(t, t)}", signed=True)
                for t, c in transforms.items()
                if c["layers"]
            ]
            if figures:
                out.append(
                    "<details><summary>Difference per layer (heads averaged), per "
                    f'transformation</summary><div class="body">{"".join(figures)}</div></details>'
                )
    if document["skipped"]:
        out.append(
            f'<p class="warn">{len(document["skipped"])} variants not analyzed (no completion '
            "tokens, or the prompt's blocks are not in the model input); see attention.json.</p>"
        )
    return "".join(out)


# --------------------------------------------------------------------------- command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a `boi run` directory")
    add_dataclass_arguments(parser, AttentionConfig, exclude=("run_dir",))


def run(args: argparse.Namespace) -> int:
    overrides = {"run_dir": args.run_dir, **overrides_from_args(args, AttentionConfig)}
    config = load_config(AttentionConfig, None, overrides)
    outcome = analyze_attention(config)
    for note in outcome.skipped:
        print(f"  skipped {note}")
    # One line per model: its Original row (else its first transformation), as in the report.
    for label, summary in outcome.document["summary"].items():
        transform = "original" if "original" in summary else next(iter(summary), None)
        if transform is not None:
            shares = summary[transform]["shares"]
            text = ", ".join(f"{_title(c)} {100 * v:.1f}%" for c, v in shares.items() if v)
            print(f"  {label} {transform}: {text}")
    print(
        f"boi analyze attention: {outcome.computed} forward passes, {outcome.reused} variants "
        f"reused (read before, or the same model and texts); {outcome.path}; report: {Path(config.run_dir) / 'report' / 'report.html'}"
    )
    return 0
