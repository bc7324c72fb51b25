"""The `reference` backend: every prompt's own canonical solution, as a completion.

The harness sanity check users know from other harnesses: `boi run --config reference` must
give 100% on every row, since each variant carries its solution adapted to it (Anonymize renames
the function in its solution too). A row below 100% is the harness's fault or a problem's (a
reference that fails its own tests), never the model's.

It needs the problem records, which the runner hands over through `prepare`; the identity is a
digest of the solutions, so a changed dataset never reuses stale cached "samples".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.generation._backend import BackendBase, NoOptions, Request
from benchmarks.generation._decoding import DecodingConfig, prompt_sha256


class ReferenceBackend(BackendBase):
    Options = NoOptions
    default_model = ""
    max_samples_per_call = 1 << 16

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self._solutions: dict[str, str] = {}
        self.identity = "reference|unprepared"

    def prepare(self, problems: Iterable[Any]) -> list[str]:
        solutions: dict[str, str] = {}
        missing: list[str] = []
        for problem in problems:
            if not problem.canonical_solution:
                missing.append(problem.source_task_id or problem.task_id)
            solution = problem.canonical_solution or ""
            key = prompt_sha256(problem.prompt)
            # Identical prompts (a transformation that changed nothing) share one solution.
            solutions.setdefault(key, solution)
        self._solutions = solutions
        digest = hashlib.sha256()
        for key in sorted(solutions):
            digest.update(f"{key}\0{solutions[key]}\0".encode())
        self.identity = f"reference|{digest.hexdigest()[:16]}"
        sources = sorted(set(missing))
        if not sources:
            return []
        return [
            f"reference: {len(sources)} problems have no canonical solution (e.g. {sources[0]}); "
            "their rows cannot reach 100% (the data file carries no reference for them)"
        ]

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        if not self._solutions:
            raise UserError(
                "the reference backend was given no problems; it runs inside boi run "
                "(--model reference), which hands it the problem records."
            )
        for position, request in enumerate(requests):
            solution = self._solutions.get(request.prompt_hash, "")
            if decoding.chat:
                # What a chat model would reply; post-processing takes the body out again.
                program = solution if "def " not in request.prompt else request.prompt + solution
                solution = f"```python\n{program.rstrip()}\n```\n"
            yield position, [solution for _ in request.indices]
