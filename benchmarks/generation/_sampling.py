"""The sampling loop every run shares: prompt groups x seeds -> cached generation -> samples.

`boi run`, `boi bias run`, `boi bias test` and the minimal-prompt search all ask the same thing
of a backend: n completions per prompt under each seed, where prompts of different kinds (a
function body, a whole program, a method) keep their own decoding. `sample_prompts` is that
loop, once: it generates through the cache (`generate_samples`: identical prompts share
samples, finished requests survive a killed run), numbers samples so that indices stay unique
across seeds (`seed_index * n + i`), and adds up what was generated. Callers turn `Sample`s
into their rows.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from benchmarks.common.progress import stage
from benchmarks.generation._backend import Backend, check_seeds, sample_verb
from benchmarks.generation._cache import generate_samples, read_generated
from benchmarks.generation._decoding import DecodingConfig
from benchmarks.generation.replies import EXTRACTED, NO_CODE, TRUNCATED, ReplyReading


@dataclass(frozen=True)
class PromptGroup:
    """Prompts (id -> text) generated with one decoding; `name` tells groups apart in the log."""

    prompts: Mapping[str, str]
    decoding: DecodingConfig
    name: str = ""


@dataclass(frozen=True)
class Sample:
    prompt_id: str
    seed: int
    sample_index: int
    """seed_index * n + i: unique across the seeds of one decoding."""
    raw: str
    """As the model wrote it (what the generation cache stores)."""
    prompt: str = ""
    decoding: DecodingConfig | None = None
    """How it was generated; None for a sample made elsewhere (a completions file's), whose
    text is taken as it is."""
    ordinal: tuple[int, int] | None = None
    """Where the sample stands in the unsharded run (the cell's place, the sample's place in
    the cell), set by the study driver: the rows judged from it carry it, and a merge puts the
    shards' rows in this order (`benchmarks.study`)."""

    @cached_property
    def reading(self) -> ReplyReading | None:
        """How `raw` reads as a completion of `prompt` (`read_completion_reply`: cut at the
        stops, the code taken out of a chat reply), read when a judge first asks, never by the
        sampling loop: a study that reads its replies its own way (a fairness test's method)
        reads them once. None for a sample made elsewhere."""
        if self.decoding is None:
            return None
        return read_generated(self.raw, self.prompt, self.decoding)

    @property
    def completion(self) -> str:
        """The code to judge: the reading's, or a given sample's text."""
        return self.raw if self.reading is None else self.reading.completion

    @property
    def chat(self) -> bool:
        """Whether `raw` is read for code (a chat reply, or a continuation read for its
        helpers: decoding `keep_helpers`) rather than taken as it is up to the stops."""
        decoding = self.decoding
        return decoding is not None and (decoding.chat or decoding.keep_helpers)

    def reply_fields(self) -> dict[str, str]:
        """How a chat reply was read, as result-row fields (`reply_status`, `reply_shape`, and
        `reply_reason` where no code came out): the report counts them, and the sandbox judges
        a reply without code as failed without running anything. Empty for a continuation."""
        if not self.chat or self.reading is None:
            return {}
        return self.reading.row_fields()


@dataclass
class SamplingTotals:
    """What a run's generation did, added up over models, groups and seeds."""

    requested_samples: int = 0
    unique_samples: int = 0
    cache_hits: int = 0
    generated: int = 0

    def add(self, other: SamplingTotals) -> None:
        for name, value in other.to_json().items():
            setattr(self, name, getattr(self, name) + value)

    def to_json(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def sample_prompts(
    backend: Backend,
    groups: Sequence[PromptGroup],
    seeds: Sequence[int],
    cache_path: str | os.PathLike[str],
    *,
    log: Callable[[str], None] | None = None,
    timings: dict[str, float] | None = None,
    what: str = "",
    prefix: str = "boi",
) -> tuple[list[Sample], SamplingTotals]:
    """n samples of every prompt of every group under every seed, in (seed, group, id) order.

    Each group's decoding is used as given with its seed replaced. With `log`, each call's
    summary is logged; with `timings` too, each call is a timed stage named
    `generate {what} seed {seed}` (plus the group's name).
    `totals` counts this call only: a caller that warns about empty completions warns about
    its own.
    """
    spec = getattr(backend, "spec", None)
    check_seeds(backend, spec.label if spec is not None else "this model", seeds)
    samples: list[Sample] = []
    totals = SamplingTotals()
    for seed_index, seed in enumerate(seeds):
        for group in groups:
            if not group.prompts:
                continue
            decoding = dataclasses.replace(group.decoding, seed=seed)
            name = f"generate {what} seed {seed}" + (f" ({group.name})" if group.name else "")
            if log is not None and timings is not None:
                with stage(name, log, timings, prefix):
                    outcome = generate_samples(backend, group.prompts, decoding, cache_path)
            else:
                outcome = generate_samples(backend, group.prompts, decoding, cache_path)
            if log is not None:
                log(f"  {outcome.summary(sample_verb(backend))}")
            totals.add(
                SamplingTotals(
                    requested_samples=outcome.requested_samples,
                    unique_samples=outcome.unique_samples,
                    cache_hits=outcome.cache_hits,
                    generated=outcome.generated,
                )
            )
            for prompt_id, text in group.prompts.items():
                for index, raw in enumerate(outcome.raw[prompt_id]):
                    number = seed_index * decoding.n + index
                    samples.append(Sample(prompt_id, seed, number, raw, text, decoding))
    return samples, totals


def unread_replies_warning(samples: Sequence[Sample], what: str) -> str | None:
    """A warning line when replies among `samples` gave no code to test (None when every one
    did): a model that cannot code and a reader that cannot read look alike in the numbers,
    so a run says how many replies count as failures without running. Chat replies are
    counted by how they were read; continuations when empty once cut at the stops."""
    read = Counter(s.reading.status for s in samples if s.chat and s.reading is not None)
    unread = sum(n for status, n in read.items() if status != EXTRACTED)
    if unread:
        return (
            f"warning: {unread} of {sum(read.values())} chat replies from {what} gave no code "
            f"to test ({read.get(NO_CODE, 0)} without the code asked for, "
            f"{read.get(TRUNCATED, 0)} cut off); they count as failures (report: How replies "
            "were read)"
        )
    empty = sum(1 for s in samples if s.decoding is not None and not s.completion.strip())
    if empty:
        return (
            f"warning: {empty} completions from {what} are empty after post-processing; they "
            "count as failures"
        )
    return None
