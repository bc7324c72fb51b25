"""The transformation catalogue (paper section 5.2): pure, registered, self-describing.

A transformation is made by a registered factory (`TRANSFORMS[name](**params)`), which binds
and records its parameters. Applying it to a split problem and its keyword analysis returns new
immutable problems, each with one lineage step saying what was removed or renamed, or an
explicit `NotApplicable` with the reason. Nothing here reads global state: the only randomness
is a `random.Random` seeded from (run seed, task id, transform name), so results do not depend
on worker count or order.

Catalogue: original, drop_one, drop_all, drop_examples, anonymize, anon_drop_one,
anon_drop_all, anon_drop_examples. Examples and keywords are never dropped together, and no
transformation removes every block.
"""

from __future__ import annotations

import ast
import random
import re
import tokenize
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.errors import UserError, suggest
from benchmarks.problem import Block, LineageStep, Problem
from benchmarks.pysource import rename_identifier
from perturb.keywords import KeywordAnalysis, KeywordDecision

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class NotApplicable:
    """A transformation that does not apply to a problem, and why."""

    reason: str


Outcome = list[Problem] | NotApplicable


@dataclass(frozen=True)
class Transform:
    """A catalogue transformation bound to its parameters."""

    name: str
    version: str
    params: dict[str, Any]
    needs_keywords: bool
    description: str
    _apply: Callable[..., Outcome] = field(repr=False, compare=False)

    def __call__(
        self, problem: Problem, keywords: KeywordAnalysis | None = None, seed: int = 0
    ) -> Outcome:
        """Variants of `problem` (split into blocks), or NotApplicable."""
        if problem.blocks is None:
            return NotApplicable("the problem has not been split into blocks")
        if self.needs_keywords and keywords is None:
            raise ValueError(f"transform {self.name} needs the problem's keyword analysis")
        rng = random.Random(f"{seed}:{problem.task_id}:{self.name}")
        outcome = self._apply(problem, keywords, rng, **self.params)
        if isinstance(outcome, NotApplicable):
            return outcome
        checked = []
        for index, variant in enumerate(outcome):
            problem_id = f"{problem.task_id}::{self.name}" + (
                f"/{index}" if len(outcome) > 1 or self.name.endswith("drop_one") else ""
            )
            step = LineageStep(
                self.name, self.version, self.params, seed, variant.metadata.get("_changes", {})
            )
            metadata = {k: v for k, v in variant.metadata.items() if k != "_changes"}
            variant = variant.replace(
                task_id=problem_id if self.name != "original" else problem.task_id,
                source_task_id=problem.source_task_id,
                lineage=problem.lineage + ((step,) if self.name != "original" else ()),
                metadata=metadata,
            )
            invalid = _invalid_python(variant)
            if invalid:
                return NotApplicable(f"the result would not be valid Python ({invalid})")
            checked.append(variant)
        return checked


TRANSFORMS: dict[str, Callable[..., Transform]] = {}
CATALOGUE = (
    "original",
    "drop_one",
    "drop_all",
    "drop_examples",
    "anonymize",
    "anon_drop_one",
    "anon_drop_all",
    "anon_drop_examples",
)
# Analysis probes: registered like transformations, but not robustness tests (they remove
# blocks the catalogue never removes together).
PROBES = ("name_only",)


def transform(
    name: str, version: str, needs_keywords: bool = False
) -> Callable[[Callable[..., Outcome]], Callable[..., Transform]]:
    """Register `fn(problem, keywords, rng, **params)` as the catalogue entry `name`.

    The registered factory takes the parameters (with the function's defaults) and returns a
    `Transform` that records them.
    """

    def register(fn: Callable[..., Outcome]) -> Callable[..., Transform]:
        import inspect

        defaults = {k: p.default for k, p in list(inspect.signature(fn).parameters.items())[3:]}

        def factory(**params: Any) -> Transform:
            unknown = set(params) - set(defaults)
            if unknown:
                key = sorted(unknown)[0]
                raise UserError(
                    f"transform {name} has no parameter {key!r}{suggest(key, defaults)}; it takes {sorted(defaults) or 'none'}."
                )
            return Transform(
                name,
                version,
                {**defaults, **params},
                needs_keywords,
                (fn.__doc__ or "").strip().splitlines()[0],
                fn,
            )

        factory.__doc__ = fn.__doc__
        TRANSFORMS[name] = factory
        return factory

    return register


def get_transform(name: str, /, **params: Any) -> Transform:
    """The registered transformation `name` bound to `params`; unknown names get a suggestion."""
    if name not in TRANSFORMS:
        raise UserError(
            f"Unknown transform {name!r}{suggest(name, TRANSFORMS)}; choose from {', '.join(TRANSFORMS)}."
        )
    return TRANSFORMS[name](**params)


def transform_parameters(name: str) -> dict[str, Any]:
    """The parameters (with defaults) the transformation `name` takes."""
    return dict(TRANSFORMS[name]().params)


# --- pure helpers -----------------------------------------------------------------------


def _with_changes(
    problem: Problem, prompt: str, blocks: tuple[Block, ...], changes: dict[str, Any], **fields: Any
) -> Problem:
    metadata = {**problem.metadata, "_changes": changes}
    return problem.replace(prompt=prompt, blocks=blocks, metadata=metadata, **fields)


def remove_spans(
    problem: Problem, spans: Sequence[tuple[int, int]]
) -> tuple[str, tuple[Block, ...]]:
    """The prompt and blocks with the given (non-overlapping) character spans removed.

    Each span must lie inside one block; blocks left empty are dropped.
    """
    spans = sorted(spans)
    blocks, offset = [], 0
    for block in problem.blocks or ():
        lo, hi = offset, offset + len(block.text)
        text, cursor = [], lo
        for start, end in spans:
            if start >= lo and end <= hi:
                text.append(problem.prompt[cursor:start])
                cursor = end
            elif start < hi and end > lo:
                raise ValueError(f"span {start}-{end} crosses the {block.kind} block boundary")
        text.append(problem.prompt[cursor:hi])
        if "".join(text):
            blocks.append(Block(block.kind, "".join(text)))
        offset = hi
    return "".join(b.text for b in blocks), tuple(blocks)


def _invalid_python(problem: Problem) -> str | None:
    source = problem.prompt if problem.is_stdio else problem.prompt + "    pass\n"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as err:
        return f"{err.msg}, line {err.lineno}"
    return None


def _drop_keywords(problem: Problem, decisions: Sequence[KeywordDecision]) -> Problem:
    spans = sorted({(o.start, o.end) for d in decisions for o in d.occurrences})
    prompt, blocks = remove_spans(problem, spans)
    changes = {
        "removed": [
            {
                "keyword": d.keyword,
                "rule": d.rule,
                "keybert_score": d.keybert_score,
                "anchor_similarity": d.anchor_similarity,
                "context_token": d.context_token,
                "context_similarity": d.context_similarity,
                "spans": [[o.start, o.end] for o in d.occurrences],
                "texts": [o.text for o in d.occurrences],
            }
            for d in decisions
        ],
    }
    return _with_changes(problem, prompt, blocks, changes)


def _code_like(name: str) -> bool:
    """A name that cannot be an ordinary English word (snake_case, digits, camelCase)."""
    return "_" in name or any(c.isdigit() for c in name) or name != name.lower()


def anonymize_problem(problem: Problem, new_name: str) -> Problem | NotApplicable:
    """Rename the function under test everywhere it is used as a name.

    Code (prefix, signature, tests, reference solution) is renamed token by token. In the
    docstring, examples are renamed wherever the name appears; in the description only where it
    reads as code (a call `name(`, or a name that is not an English word), so a description
    saying "Return the median" keeps its word while `median(l)` in an example does not leak.
    """
    old = problem.entry_point
    if old is None:
        return NotApplicable("stdin/stdout problems have no function name")
    if not IDENTIFIER.fullmatch(new_name):
        raise UserError(f"anonymize name {new_name!r} is not a Python identifier; use e.g. 'func'.")
    if old == new_name:
        return NotApplicable(f"the function is already called {new_name}")
    everything = problem.prompt + problem.test + (problem.canonical_solution or "")
    if re.search(rf"\b{re.escape(new_name)}\b", everything):
        return NotApplicable(
            f"the name {new_name!r} is already used in the problem; choose another anonymous name"
        )
    word = re.compile(rf"\b{re.escape(old)}\b")
    call = re.compile(rf"\b{re.escape(old)}(?=\s*\()")
    body = "    pass\n"  # lets a lone signature tokenize; removed again below
    try:
        test = rename_identifier(problem.test, old, new_name, skip_definitions=True)
        solution = problem.canonical_solution
        if solution is not None:
            # Renamed in context (after its prompt), since a body alone may not tokenize.
            solution = rename_identifier(problem.prompt + solution, old, new_name)[
                len(rename_identifier(problem.prompt, old, new_name)) :
            ]
        blocks, counts = [], {}
        for block in problem.blocks or ():
            if block.kind == "prefix":
                text = rename_identifier(block.text, old, new_name)
            elif block.kind == "name":
                text = rename_identifier(block.text + body, old, new_name)[: -len(body)]
            elif block.kind == "examples":
                text = word.sub(new_name, block.text)
            elif block.kind == "description":
                text = (word if _code_like(old) else call).sub(new_name, block.text)
            else:
                text = block.text
            if text != block.text:
                counts[block.kind] = len(word.findall(block.text)) - len(word.findall(text))
            blocks.append(Block(block.kind, text))
    except (SyntaxError, tokenize.TokenError) as err:
        return NotApplicable(f"the code does not tokenize ({type(err).__name__}: {err})")
    prompt = "".join(b.text for b in blocks)
    changes = {"old_name": old, "new_name": new_name, "renamed_in": counts}
    return _with_changes(
        problem,
        prompt,
        tuple(blocks),
        changes,
        entry_point=new_name,
        test=test,
        canonical_solution=solution,
    )


def _merge_changes(first: Problem, second: Problem) -> Problem:
    merged = {**first.metadata.get("_changes", {}), **second.metadata.get("_changes", {})}
    return second.replace(metadata={**second.metadata, "_changes": merged})


def _anonymized(outcome: Outcome, name: str) -> Outcome:
    if isinstance(outcome, NotApplicable):
        return outcome
    out = []
    for variant in outcome:
        renamed = anonymize_problem(variant, name)
        if isinstance(renamed, NotApplicable):
            return renamed
        out.append(_merge_changes(variant, renamed))
    return out


# --- the catalogue ----------------------------------------------------------------------


@transform("original", "1")
def original(problem: Problem, keywords: KeywordAnalysis | None, rng: random.Random) -> Outcome:
    """The unmodified problem (the baseline every drop is measured against)."""
    return [problem]


@transform("drop_one", "1", needs_keywords=True)
def drop_one(problem: Problem, keywords: KeywordAnalysis, rng: random.Random) -> Outcome:
    """Remove one droppable keyword from the description: one variant per keyword."""
    return _drop_each(problem, keywords)


@transform("drop_all", "1", needs_keywords=True)
def drop_all(problem: Problem, keywords: KeywordAnalysis, rng: random.Random) -> Outcome:
    """Remove every droppable keyword from the description at once."""
    if not keywords.droppable:
        return NotApplicable(keywords.skipped or "no droppable keyword")
    return [_drop_keywords(problem, keywords.droppable)]


@transform("drop_examples", "1")
def drop_examples(
    problem: Problem, keywords: KeywordAnalysis | None, rng: random.Random
) -> Outcome:
    """Remove the whole example block."""
    return _drop_example_block(problem)


def _drop_example_block(problem: Problem) -> Outcome:
    examples = problem.block("examples")
    if examples is None:
        return NotApplicable("the problem has no examples")
    if problem.block("description") is None or "description" in problem.absent_blocks:
        return NotApplicable(
            "the problem has no description; dropping its examples would leave nothing to solve from"
        )
    start = sum(len(b.text) for b in problem.blocks[: problem.blocks.index(examples)])
    prompt, blocks = remove_spans(problem, [(start, start + len(examples.text))])
    return [
        _with_changes(
            problem,
            prompt,
            blocks,
            {
                "removed": [
                    {
                        "block": "examples",
                        "spans": [[start, start + len(examples.text)]],
                        "texts": [examples.text],
                    }
                ]
            },
        )
    ]


@transform("anonymize", "1")
def anonymize(
    problem: Problem, keywords: KeywordAnalysis | None, rng: random.Random, name: str = "func"
) -> Outcome:
    """Rename the function (signature, docstring, examples, entry point, tests) to `name`."""
    renamed = anonymize_problem(problem, name)
    return renamed if isinstance(renamed, NotApplicable) else [renamed]


@transform("anon_drop_one", "1", needs_keywords=True)
def anon_drop_one(
    problem: Problem, keywords: KeywordAnalysis, rng: random.Random, name: str = "func"
) -> Outcome:
    """Anonymize, and remove one droppable keyword: one variant per keyword."""
    return _anonymized(_drop_each(problem, keywords), name)


@transform("anon_drop_all", "1", needs_keywords=True)
def anon_drop_all(
    problem: Problem, keywords: KeywordAnalysis, rng: random.Random, name: str = "func"
) -> Outcome:
    """Anonymize, and remove every droppable keyword."""
    if not keywords.droppable:
        return NotApplicable(keywords.skipped or "no droppable keyword")
    return _anonymized([_drop_keywords(problem, keywords.droppable)], name)


@transform("anon_drop_examples", "1")
def anon_drop_examples(
    problem: Problem, keywords: KeywordAnalysis | None, rng: random.Random, name: str = "func"
) -> Outcome:
    """Anonymize, and remove the whole example block."""
    return _anonymized(_drop_example_block(problem), name)


def _drop_each(problem: Problem, keywords: KeywordAnalysis) -> Outcome:
    if not keywords.droppable:
        return NotApplicable(keywords.skipped or "no droppable keyword")
    return [_drop_keywords(problem, [d]) for d in keywords.droppable]


@transform("name_only", "1")
def name_only(problem: Problem, keywords: KeywordAnalysis | None, rng: random.Random) -> Outcome:
    """Probe (paper appendix 10.8): keep only the prefix and the signature, to see which problems
    are solvable from the function name alone."""
    if problem.is_stdio or problem.block("name") is None:
        return NotApplicable("the problem has no name block")
    kept = {"prefix", "name"}
    offset, spans, removed = 0, [], []
    for block in problem.blocks or ():
        if block.kind not in kept:
            spans.append((offset, offset + len(block.text)))
            removed.append(
                {
                    "block": block.kind,
                    "spans": [[offset, offset + len(block.text)]],
                    "texts": [block.text],
                }
            )
        offset += len(block.text)
    prompt, blocks = remove_spans(problem, spans)
    if not prompt.endswith("\n"):
        return NotApplicable("the signature does not end a line")
    return [_with_changes(problem, prompt, blocks, {"removed": removed})]
