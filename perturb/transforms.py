"""The transformation catalogue (paper section 5.2): pure, registered, self-describing.

A transformation is a function `fn(problem, keywords, **params)` registered with `@transform`;
it returns `(problem, changes)` pairs (`Variant`s: the new problem, and what was removed or
renamed) or an explicit `NotApplicable` with the reason. Its keyword-only parameters, with
their defaults, are what users can set (`PerturbConfig.params`, `boi perturb --param
NAME.PARAM=VALUE`); the registered factory (`TRANSFORMS[name](**params)`) checks them and binds
them into a `Transform`, which names the variants, records one lineage step per variant and
refuses results that are not valid Python. `register_chain` composes registered
transformations into a new one. Nothing here reads global state: a transformation that needs
randomness declares a keyword-only `rng` and receives `transform_rng(seed, task id, name)`, so
results do not depend on worker count or order.

Catalogue: original, drop_one, drop_all, drop_examples, anonymize, anon_drop_one,
anon_drop_all, anon_drop_examples. Examples and keywords are never dropped together, and no
transformation removes every block.
"""

from __future__ import annotations

import ast
import inspect
import random
import re
import tokenize
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from benchmarks.common.config import convert_value
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.registry import Registry
from benchmarks.languages import language_named
from benchmarks.problem import Block, LineageStep, Problem
from benchmarks.pysource import rename_identifier
from perturb.blocks import block_offsets
from perturb.clike import anonymize_in_language, invalid_program
from perturb.keywords import KeywordAnalysis, KeywordDecision

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RNG = "rng"
"""The keyword-only parameter through which a transformation asks for its random generator."""


@dataclass(frozen=True)
class NotApplicable:
    """A transformation that does not apply to a problem, and why."""

    reason: str
    keep_unchanged: bool = True
    """Whether a run that keeps problems unchanged where a transformation does not apply
    (`PerturbConfig.keep_unchanged`) keeps this one. False where the transformation means
    nothing for the problem's dataset (Anonymize on BigCodeBench, whose functions are all
    `task_func`): no variant, so no report row measures a perturbation that never was."""


class Variant(NamedTuple):
    """What a transformation function makes: the new problem and its lineage `changes`."""

    problem: Problem
    changes: dict[str, Any]


Variants = list[Variant] | NotApplicable
"""What a registered transformation function returns."""
Outcome = list[Problem] | NotApplicable
"""What a bound `Transform` returns: the variants with their ids and lineage."""
Apply = Callable[[Problem, KeywordAnalysis | None, int], Variants]
"""A transformation bound to its parameters: (problem, keywords, seed) -> variants."""


def transform_rng(seed: int, task_id: str, name: str) -> random.Random:
    """The random generator of transformation `name` on `task_id` in a run with `seed`."""
    return random.Random(f"{seed}:{task_id}:{name}")


@dataclass(frozen=True)
class Transform:
    """A catalogue transformation bound to its parameters."""

    name: str
    version: str
    params: dict[str, Any]
    needs_keywords: bool
    multi_variant: bool
    """It may make several variants of one problem: ids always carry an index (`::name/0`)."""
    description: str
    _apply: Apply = field(repr=False, compare=False)
    stochastic: bool = False
    """It draws from its `rng`: a run may ask for several seeds of it (ReCode's s0..s9)."""

    def variants(
        self, problem: Problem, keywords: KeywordAnalysis | None = None, seed: int = 0
    ) -> Variants:
        """The raw `(problem, changes)` pairs: no ids, lineage or validity check yet."""
        if self.needs_keywords and keywords is None:
            raise ValueError(f"transform {self.name} needs the problem's keyword analysis")
        return self._apply(problem, keywords, seed)

    def __call__(
        self,
        problem: Problem,
        keywords: KeywordAnalysis | None = None,
        seed: int = 0,
        seed_tag: int | None = None,
    ) -> Outcome:
        """Variants of `problem` (split into blocks), or NotApplicable.

        `seed_tag`: this is the seed_tag-th of several seeds of a stochastic transformation;
        its variant ids end in `@s<seed_tag>` (ReCode's `_s<seed>` files), so the seeds' variants
        of one problem stay apart and the report takes the worst case over them."""
        if problem.blocks is None:
            return NotApplicable("the problem has not been split into blocks")
        outcome = self.variants(problem, keywords, seed)
        if isinstance(outcome, NotApplicable):
            return outcome
        checked = []
        for index, (variant, changes) in enumerate(outcome):
            if self.name == "original":
                variant = variant.replace(task_id=problem.task_id, lineage=problem.lineage)
            else:
                indexed = len(outcome) > 1 or self.multi_variant
                variant = variant.replace(
                    task_id=f"{problem.task_id}::{self.name}"
                    + (f"/{index}" if indexed else "")
                    + (f"@s{seed_tag}" if seed_tag is not None else ""),
                    source_task_id=problem.source_task_id,
                    lineage=problem.lineage
                    + (LineageStep(self.name, self.version, self.params, seed, changes),),
                )
            # Each language's own check (perturb.clike for the brace languages).
            if variant.language == "python":
                invalid = _invalid_python(variant)
            else:
                invalid = invalid_program(variant)
            if invalid:
                language = language_named(variant.language).display_name
                return NotApplicable(f"the result would not be valid {language} ({invalid})")
            checked.append(variant)
        return checked


class TransformFactory:
    """A registered transformation: call it with parameter overrides to get a `Transform`."""

    def __init__(
        self,
        name: str,
        version: str,
        *,
        parameters: Mapping[str, Any],
        hints: Mapping[str, Any],
        needs_keywords: bool,
        multi_variant: bool,
        description: str,
        bind: Callable[[dict[str, Any]], Apply],
        steps: tuple[str, ...] = (),
        label: str | None = None,
        stochastic: bool = False,
        family: str | None = None,
        recode_name: str | None = None,
        baseline: str = "original",
    ) -> None:
        self.name = name
        self.version = version
        self.parameters = dict(parameters)
        """Parameter name -> default: everything a user can set."""
        self.hints = dict(hints)
        self.needs_keywords = needs_keywords
        self.multi_variant = multi_variant
        self.description = description
        self.label = label
        """Its row name in reports (the paper's Table 3 names); None: the name itself."""
        self.steps = steps
        """The registered transformations a chain applies, in order (empty: not a chain)."""
        self.stochastic = stochastic
        """It draws from its `rng` (a run may ask for several seeds of it)."""
        self.family = family
        """Its family (`FAMILIES`), for listings, configs and the severity ranking."""
        self.recode_name = recode_name
        """ReCode's name for the same perturbation (its `config.json`), where there is one:
        the name of ReCode's released files and of ours in `--format recode`."""
        self.baseline = baseline
        """The registered transformation its drops are measured against: `original`, or
        `partial_code` for ReCode's families on partial code (ReCode compares those with its
        nominal partial prompts)."""
        self._bind = bind

    def check_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """`params` over the defaults, values converted to the declared types; unknown names and
        wrong types are UserErrors saying what the transformation takes."""
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            key = unknown[0]
            raise UserError(
                f"transform {self.name} has no parameter {key!r}{suggest(key, self.parameters)}; it takes {sorted(self.parameters) or 'none'}."
            )
        checked = dict(self.parameters)
        for key, value in params.items():
            hint = self.hints.get(key, Any)
            checked[key] = convert_value(value, hint, f"transform {self.name} parameter {key}")
        return checked

    def __call__(self, **params: Any) -> Transform:
        checked = self.check_params(params)
        return Transform(
            self.name,
            self.version,
            checked,
            self.needs_keywords,
            self.multi_variant,
            self.description,
            self._bind(checked),
            self.stochastic,
        )

    def __repr__(self) -> str:
        return f"<transform {self.name} v{self.version} {self.parameters}>"


TRANSFORMS: Registry[TransformFactory] = Registry("transform", base=TransformFactory)
"""Every registered transformation, by name (the catalogue, the probes, and any you add), in
registration order; `@transform` and `register_chain` add to it."""
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
FAMILIES = {
    "blocks": "Blocks of Influence: drop keywords, drop the examples, anonymize (the paper's catalogue)",
    "docstring": "ReCode's natural-language perturbations of the docstring's description",
    "function_name": "ReCode's renamings of the function under test",
    "syntax": "ReCode's code-syntax perturbations of the partial code (prompt + half the solution)",
    "format": "ReCode's format perturbations of the partial code",
}
"""Family name -> what its transformations perturb."""


def _summary(doc: str | None) -> str:
    """A docstring's first paragraph as one line: its first line alone stopped mid-sentence
    wherever the sentence wrapped (`boi perturb --list`, the transformation reference)."""
    paragraph = (doc or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split())


def transform(
    name: str,
    version: str,
    needs_keywords: bool = False,
    multi_variant: bool = False,
    label: str | None = None,
    *,
    family: str | None = None,
    recode: str | None = None,
    baseline: str = "original",
) -> Callable[[Callable[..., Variants]], TransformFactory]:
    """Register `fn(problem, keywords, *, **params)` as the transformation `name`.

    `fn` returns `Variant(problem, changes)` pairs or `NotApplicable`. Its keyword-only
    parameters, each with a default (and a type annotation, used to check user values), are the
    transformation's parameters; a keyword-only `rng` is not a parameter but receives
    `transform_rng(seed, task id, name)`. `multi_variant`: it may make several variants of one
    problem (ids then always carry an index, even when a problem yields only one). `label`: its
    row name in reports (default: `name`). `family`: one of `FAMILIES`; `recode`: ReCode's name
    for the same perturbation; `baseline`: what its drops are measured against (see
    `TransformFactory.baseline`). A transformation that takes an `rng` is stochastic.
    Registering a name that is already registered is an error naming both (`unregister` the
    first to replace it). Returns the factory (also in `TRANSFORMS[name]`).
    """
    if family is not None and family not in FAMILIES:
        raise ValueError(f"transform {name}: family {family!r} is not one of {sorted(FAMILIES)}")

    def register(fn: Callable[..., Variants]) -> TransformFactory:
        signature = inspect.signature(fn)
        parameters = list(signature.parameters.values())
        if len(parameters) < 2 or any(
            p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters[:2]
        ):
            raise TypeError(f"transform {name}: {fn.__name__} must take (problem, keywords, ...)")
        own = {p.name: p for p in parameters[2:] if p.name != RNG}
        missing = [p for p, spec in own.items() if spec.default is inspect.Parameter.empty]
        if missing:
            raise TypeError(f"transform {name}: parameter {missing[0]!r} needs a default")
        try:
            hints = typing.get_type_hints(fn)
        except (NameError, TypeError):  # an annotation this module cannot resolve: no checks
            hints = {}
        wants_rng = RNG in signature.parameters

        def bind(params: dict[str, Any]) -> Apply:
            def apply(problem: Problem, keywords: KeywordAnalysis | None, seed: int) -> Variants:
                extra = {RNG: transform_rng(seed, problem.task_id, name)} if wants_rng else {}
                return fn(problem, keywords, **params, **extra)

            return apply

        factory = TransformFactory(
            name,
            version,
            parameters={p: spec.default for p, spec in own.items()},
            hints={p: hints.get(p, Any) for p in own},
            needs_keywords=needs_keywords,
            multi_variant=multi_variant,
            description=_summary(fn.__doc__),
            bind=bind,
            label=label,
            stochastic=wants_rng,
            family=family,
            recode_name=recode,
            baseline=baseline,
        )
        factory.__doc__ = fn.__doc__
        TRANSFORMS.register(name, factory, origin=f"{fn.__module__}:{fn.__qualname__}")
        return factory

    return register


def register_chain(
    name: str,
    *steps: str,
    version: str = "1",
    description: str | None = None,
    label: str | None = None,
    fixed: dict[str, Any] | None = None,
) -> TransformFactory:
    """Register `name`: the registered transformations `steps` applied one after the other.
    `fixed` sets step parameters for this chain (they are not the chain's parameters).

    Every variant of one step goes through the next (a multi-variant step makes the chain
    multi-variant); the chain does not apply where any step does not (the first reason is
    kept). Its parameters are its steps' (names must not clash), and its one lineage step holds
    the steps' changes merged (lists concatenated, other keys from the later step). Keyword
    positions refer to the original prompt, so only the first step may need keywords.
    """
    if len(steps) < 2:
        raise ValueError(f"chain {name} needs at least two steps, got {list(steps)}")
    unknown = [s for s in steps if s not in TRANSFORMS]
    if unknown:
        raise ValueError(
            f"chain {name}: {unknown[0]!r} is not registered{suggest(unknown[0], TRANSFORMS)}"
        )
    factories = [TRANSFORMS[s] for s in steps]
    if any(f.needs_keywords for f in factories[1:]):
        raise ValueError(
            f"chain {name}: only the first step may need keywords (their positions are the "
            "original prompt's)"
        )
    parameters: dict[str, Any] = {}
    hints: dict[str, Any] = {}
    for factory in factories:
        clash = set(parameters) & set(factory.parameters)
        if clash:
            raise ValueError(f"chain {name}: steps share the parameter {sorted(clash)[0]!r}")
        parameters.update(factory.parameters)
        hints.update(factory.hints)
    fixed = dict(fixed or {})
    unknown_fixed = sorted(set(fixed) - set(parameters))
    if unknown_fixed:
        raise ValueError(f"chain {name}: no step has the parameter {unknown_fixed[0]!r}")
    for key in fixed:
        del parameters[key], hints[key]

    def bind(params: dict[str, Any]) -> Apply:
        given = {**params, **fixed}
        bound = [f(**{k: given[k] for k in f.parameters}) for f in factories]

        def apply(problem: Problem, keywords: KeywordAnalysis | None, seed: int) -> Variants:
            current = [Variant(problem, {})]
            for index, step in enumerate(bound):
                made: list[Variant] = []
                for variant, changes in current:
                    outcome = step.variants(variant, keywords, seed)
                    if isinstance(outcome, NotApplicable):
                        # A later step that means nothing for this problem makes the whole
                        # chain mean nothing (no keyword to drop is not the reason to give).
                        for later in bound[index + 1 :] if outcome.keep_unchanged else ():
                            probe = later.variants(variant, keywords, seed)
                            if isinstance(probe, NotApplicable) and not probe.keep_unchanged:
                                return probe
                        return outcome
                    made += [Variant(p, _merge_changes(changes, c)) for p, c in outcome]
                current = made
            return current

        return apply

    factory = TransformFactory(
        name,
        version,
        parameters=parameters,
        hints=hints,
        needs_keywords=factories[0].needs_keywords,
        multi_variant=any(f.multi_variant for f in factories),
        description=description or " then ".join(steps) + ".",
        bind=bind,
        steps=tuple(steps),
        label=label,
        stochastic=any(f.stochastic for f in factories),
        family=factories[0].family,
        baseline=factories[0].baseline,
    )
    TRANSFORMS.register(name, factory, origin=f"the chain {' then '.join(steps)}")
    return factory


def _merge_changes(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(first)
    for key, value in second.items():
        earlier = merged.get(key)
        both_lists = isinstance(earlier, list) and isinstance(value, list)
        merged[key] = earlier + value if both_lists else value
    return merged


def unregister(name: str) -> None:
    """Remove the transformation `name` (tests; a plugin replacing a built-in)."""
    TRANSFORMS.unregister(name)


def get_transform(name: str, /, **params: Any) -> Transform:
    """The registered transformation `name` bound to `params`; unknown names get a suggestion."""
    return TRANSFORMS.load(name)(**params)


def transform_parameters(name: str) -> dict[str, Any]:
    """The parameters (with defaults) the transformation `name` takes."""
    return dict(TRANSFORMS.load(name).parameters)


def transform_labels() -> dict[str, str]:
    """name -> report row name for the transformations that declare one, in catalogue order
    (the paper's Table 3 rows); others are reported under their own name."""
    return {name: f.label for name, f in TRANSFORMS.items() if f.label is not None}


def transform_baselines() -> dict[str, str]:
    """name -> the transformation its drops are measured against, for those not measured
    against `original` (ReCode's partial-code families: `partial_code`)."""
    return {name: f.baseline for name, f in TRANSFORMS.items() if f.baseline != "original"}


def transforms_of_family(family: str) -> list[str]:
    """The registered transformations of `family`, in registration order."""
    if family not in FAMILIES:
        raise UserError(
            f"Unknown family {family!r}{suggest(family, FAMILIES)}; choose from {', '.join(FAMILIES)}."
        )
    return [name for name, f in TRANSFORMS.items() if f.family == family]


def bind_transforms(
    names: Iterable[str],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    anonymous_name: str | None = None,
) -> list[Transform]:
    """The transformations `names`, in order, bound to their parameters.

    `params`: transformation name -> parameter overrides (every name must be registered, every
    parameter one the transformation takes, even for transformations not in `names`). `anonymous_name` fills `name` for each
    transformation that takes one, unless `params` sets it. UserErrors say what to fix.
    """
    names = list(names)
    if any("," in name for name in names):
        listed = ", ".join(n.strip() for name in names for n in name.split(",") if n.strip())
        raise UserError(
            f"transforms {names} join names with commas; list each name on its own: "
            f"transforms: [{listed}]."
        )
    params = dict(params or {})
    for name, given in params.items():
        if name not in TRANSFORMS:
            raise UserError(
                f"params names transform {name!r}, which is not registered{suggest(name, TRANSFORMS)}; choose from {', '.join(TRANSFORMS)}."
            )
        if not isinstance(given, Mapping):
            raise UserError(
                f"params.{name} must map parameter names to values (e.g. {{name: func}}), not {given!r}."
            )
        TRANSFORMS[name].check_params(given)  # also where `name` is not applied this time
    if len(set(names)) != len(names):
        raise UserError(f"transforms {names} name one transformation twice; list each once.")
    bound = []
    for name in names:
        factory = TRANSFORMS.load(name)
        given = dict(params.get(name, {}))
        if anonymous_name is not None and "name" in factory.parameters:
            given.setdefault("name", anonymous_name)
        bound.append(factory(**given))
    return bound


# --- pure helpers -----------------------------------------------------------------------


def remove_spans(
    problem: Problem, spans: Sequence[tuple[int, int]], *, sentence_case: bool = False
) -> tuple[str, tuple[Block, ...]]:
    """The prompt and blocks with the given character spans removed (overlapping ones as
    their union: two adjacent keywords may both take the space between them).

    Each span must lie inside one block; blocks left empty are dropped. With `sentence_case`,
    a removal that opened a sentence capitalises the word that now opens it ("Integers are
    ..." without `Integers` reads "Are ...", not "are ...").
    """
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    spans = merged
    blocks = []
    for block, lo, hi in block_offsets(problem.blocks or ()):
        text, cursor = "", lo
        for start, end in spans:
            if start >= lo and end <= hi:
                text += problem.prompt[cursor:start]
                cursor = end
                if sentence_case and _opens_sentence(text):
                    rest = problem.prompt[cursor:hi]
                    first = next((i for i, c in enumerate(rest) if not c.isspace()), None)
                    if first is not None and rest[first].islower():
                        text += rest[:first] + rest[first].upper()
                        cursor += first + 1
            elif start < hi and end > lo:
                raise ValueError(f"span {start}-{end} crosses the {block.kind} block boundary")
        text += problem.prompt[cursor:hi]
        if text:
            blocks.append(Block(block.kind, text))
    return "".join(b.text for b in blocks), tuple(blocks)


def _opens_sentence(before: str) -> bool:
    """Whether text following `before` (the block so far) starts a sentence: at the start of
    the block, or after a full stop, question or exclamation mark."""
    before = before.rstrip()
    return not before or before.endswith((".", "!", "?", '"""', "'''"))


def _invalid_python(problem: Problem) -> str | None:
    """Why the variant is not valid Python, or None. A function prompt is valid when a body
    completes it (`pass`), or when its own solution does: a partial-code prompt (ReCode) may
    end inside a loop, a `try` or an open bracket, or be tab-indented, where no fixed body
    fits but its solution still makes a program."""
    if problem.is_stdio:
        sources = [problem.prompt]
    else:
        # A method's body (LeetCode's `class Solution`) sits one level deeper.
        sources = [problem.prompt + "    pass\n", problem.prompt + "        pass\n"]
        if problem.canonical_solution is not None:
            sources.append(problem.prompt + problem.canonical_solution)
    first_error = None
    for source in sources:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(source)
            return None
        except SyntaxError as err:
            first_error = first_error or f"{err.msg}, line {err.lineno}"
    return first_error


def _drop_keywords(problem: Problem, decisions: Sequence[KeywordDecision]) -> Variant:
    spans = sorted({(o.start, o.end) for d in decisions for o in d.occurrences})
    prompt, blocks = remove_spans(problem, spans, sentence_case=True)
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
    return Variant(problem.replace(prompt=prompt, blocks=blocks), changes)


def _code_like(name: str) -> bool:
    """A name that cannot be an ordinary English word (snake_case, digits, camelCase)."""
    return "_" in name or any(c.isdigit() for c in name) or name != name.lower()


def anonymize_problem(problem: Problem, new_name: str) -> Variant | NotApplicable:
    """Rename the function under test everywhere it is used as a name.

    Code (prefix, signature, tests, reference solution) is renamed token by token. In the
    docstring, examples are renamed wherever the name appears; in the description only where it
    reads as code (a call `name(`, or a name that is not an English word), so a description
    saying "Return the median" keeps its word while `median(l)` in an example does not leak.
    """
    old = problem.entry_point
    if old is None:
        return NotApplicable("stdin/stdout problems have no function name")
    if problem.language != "python":  # renamed in that language's code (perturb.clike)
        done = anonymize_in_language(problem, new_name)
        return NotApplicable(done) if isinstance(done, str) else Variant(*done)
    if problem.metadata.get("name_is_no_hint"):  # every BigCodeBench task is `task_func`
        return NotApplicable(str(problem.metadata["name_is_no_hint"]), keep_unchanged=False)
    if "." in old:  # LiveCodeBench's LeetCode problems: the tests call Solution.METHOD
        return NotApplicable(
            f"the function under test is a method ({old}); renaming a class's method is not "
            "supported yet"
        )
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
    renamed = problem.replace(
        prompt="".join(b.text for b in blocks),
        blocks=tuple(blocks),
        entry_point=new_name,
        test=test,
        canonical_solution=solution,
    )
    return Variant(renamed, {"old_name": old, "new_name": new_name, "renamed_in": counts})


# --- the catalogue ----------------------------------------------------------------------


@transform("original", "1", label="Original", family="blocks")
def original(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """The unmodified problem (the baseline every drop is measured against)."""
    return [Variant(problem, {})]


def _droppable(keywords: KeywordAnalysis, name_evidence: bool) -> list[KeywordDecision]:
    return [d for d in keywords.droppable if name_evidence or not d.needs_name]


def _no_keyword(keywords: KeywordAnalysis, name_evidence: bool) -> NotApplicable:
    if keywords.skipped or name_evidence or not keywords.droppable:
        return NotApplicable(keywords.skipped or "no droppable keyword")
    return NotApplicable("every droppable keyword is recovered only from the function's name")


@transform(
    "drop_one", "1", needs_keywords=True, multi_variant=True, label="Drop One", family="blocks"
)
def drop_one(
    problem: Problem, keywords: KeywordAnalysis, *, name_evidence: bool = True
) -> Variants:
    """Remove one droppable keyword from the description: one variant per keyword.
    `name_evidence=False` keeps keywords only the function's name recovers (for Anonymize)."""
    droppable = _droppable(keywords, name_evidence)
    if not droppable:
        return _no_keyword(keywords, name_evidence)
    return [_drop_keywords(problem, [d]) for d in droppable]


@transform("drop_all", "1", needs_keywords=True, label="Drop All", family="blocks")
def drop_all(
    problem: Problem, keywords: KeywordAnalysis, *, name_evidence: bool = True
) -> Variants:
    """Remove every droppable keyword from the description at once.
    `name_evidence=False` keeps keywords only the function's name recovers (for Anonymize)."""
    droppable = _droppable(keywords, name_evidence)
    if not droppable:
        return _no_keyword(keywords, name_evidence)
    return [_drop_keywords(problem, droppable)]


def _drop_block(problem: Problem, kind: str, what: str) -> Variants:
    """The problem without its block of `kind` (`what` names it in the reasons)."""
    block = problem.block(kind)
    if block is None:
        return NotApplicable(f"the problem has no {what}")
    if problem.block("description") is None or "description" in problem.absent_blocks:
        return NotApplicable(
            f"the problem has no description; dropping its {what} would leave nothing to solve from"
        )
    # The first block equal to it: the first of its kind (split problems only: it exists).
    span = next((lo, hi) for b, lo, hi in block_offsets(problem.blocks or ()) if b == block)
    prompt, blocks = remove_spans(problem, [span])
    removed = {"block": kind, "spans": [list(span)], "texts": [block.text]}
    return [Variant(problem.replace(prompt=prompt, blocks=blocks), {"removed": [removed]})]


@transform("drop_examples", "1", label="Drop Ex", family="blocks")
def drop_examples(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Remove the whole example block."""
    return _drop_block(problem, "examples", "examples")


@transform("drop_constraints", "1", label="Drop Constraints", family="blocks")
def drop_constraints(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Remove the whole constraints block (a contest statement's bounds on the input: how
    large N is tells a solver which algorithm is fast enough)."""
    return _drop_block(problem, "constraints", "constraints")


@transform("drop_requirements", "1", label="Drop Requirements", family="blocks")
def drop_requirements(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Remove the requirements (BigCodeBench's list of the libraries to use: does the model
    still find the library?); every requirements block, as a docstring may list them twice
    (BigCodeBench/928)."""
    found = [
        (b, lo, hi) for b, lo, hi in block_offsets(problem.blocks or ()) if b.kind == "requirements"
    ]
    if not found:
        return NotApplicable("the problem has no requirements")
    prompt, blocks = remove_spans(problem, [(lo, hi) for _, lo, hi in found])
    texts = [b.text for b, _, _ in found]
    removed = {"block": "requirements", "spans": [[lo, hi] for _, lo, hi in found], "texts": texts}
    return [Variant(problem.replace(prompt=prompt, blocks=blocks), {"removed": [removed]})]


@transform("anonymize", "1", label="Anon", family="blocks")
def anonymize(
    problem: Problem, keywords: KeywordAnalysis | None, *, name: str = "func"
) -> Variants:
    """Rename the function (signature, docstring, examples, entry point, tests) to `name`."""
    renamed = anonymize_problem(problem, name)
    return renamed if isinstance(renamed, NotApplicable) else [renamed]


# Compositions: drop first (keyword positions are the original prompt's), then rename. A
# keyword only the function's name recovers is kept: after Anonymize nothing would recover it,
# and the drop would remove information instead of a hint (paper section 5.2).
register_chain(
    "anon_drop_one",
    "drop_one",
    "anonymize",
    description="Anonymize, and remove one droppable keyword that survives anonymization: one "
    "variant per keyword.",
    label="Anon+Drop One",
    fixed={"name_evidence": False},
)
register_chain(
    "anon_drop_all",
    "drop_all",
    "anonymize",
    description="Anonymize, and remove every droppable keyword that survives anonymization.",
    label="Anon+Drop All",
    fixed={"name_evidence": False},
)
register_chain(
    "anon_drop_examples",
    "drop_examples",
    "anonymize",
    description="Anonymize, and remove the whole example block.",
    label="Anon+Drop Ex",
)


@transform("name_only", "1", label="Name only")
def name_only(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Probe (paper appendix 10.8): keep only the prefix and the signature, to see which problems
    are solvable from the function name alone."""
    if problem.is_stdio or problem.block("name") is None:
        return NotApplicable("the problem has no name block")
    kept = {"prefix", "name"}
    spans, removed = [], []
    for block, lo, hi in block_offsets(problem.blocks or ()):
        if block.kind not in kept:
            spans.append((lo, hi))
            removed.append({"block": block.kind, "spans": [[lo, hi]], "texts": [block.text]})
    prompt, blocks = remove_spans(problem, spans)
    if not prompt.endswith("\n"):
        return NotApplicable("the signature does not end a line")
    return [Variant(problem.replace(prompt=prompt, blocks=blocks), {"removed": removed})]
