"""A pure-Python backend whose completions are a function of (prompt, decoding, index), counting
what it was asked for: cache tests need no model."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence

from benchmarks.generation import BackendBase, DecodingConfig, Request


class CountingBackend(BackendBase):
    def __init__(
        self,
        name: str = "fake",
        per_call: int = 4,
        delay_s: float = 0.0,
        fail_after: int | None = None,
        empty_for: str | None = None,
    ) -> None:
        self.identity = f"fake|{name}"
        self.max_samples_per_call = per_call
        self.delay_s = delay_s
        self.fail_after = fail_after
        self.empty_for = empty_for
        self.calls: list[tuple[str, tuple[int, ...]]] = []

    def text(self, prompt: str, decoding: DecodingConfig, index: int) -> str:
        if self.empty_for and self.empty_for in prompt:
            return "\ndef other():\n    pass\n"  # all cut away by the stop "\ndef "
        digest = hashlib.sha256(
            f"{self.identity}|{prompt}|{decoding.cache_fields()}|{index}".encode()
        ).hexdigest()[:8]
        return f"    return {digest!r}  # {index}\n\ndef helper():\n    pass\n"

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            if self.fail_after is not None and len(self.calls) >= self.fail_after:
                raise KeyboardInterrupt("simulated interruption")
            time.sleep(self.delay_s)
            self.calls.append((request.prompt, request.indices))
            yield position, [self.text(request.prompt, decoding, i) for i in request.indices]

    @property
    def samples_generated(self) -> int:
        return sum(len(indices) for _, indices in self.calls)
