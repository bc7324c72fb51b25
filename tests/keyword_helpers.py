"""A tiny deterministic embedder for keyword tests (no model download, no weights), and
keyword decisions made by hand."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from benchmarks.problem import Problem
from perturb.keywords import CachedEmbedder, KeywordDecision, Occurrence

# Words that the tiny embedder treats as synonyms of each other (same vector), to drive the
# context-aware filter without a real model.
SYNONYMS = [
    {"list", "lists", "lst", "array"},
    {"integer", "int", "integers"},
    {"code", "program", "python", "programming", "variable"},
]
CODE_WORDS = {
    "list",
    "lists",
    "lst",
    "array",
    "int",
    "integer",
    "integers",
    "string",
    "sort",
    "sorted",
    "reverse",
    "return",
    "tuple",
    "number",
    "numbers",
    "sum",
}


def _vector(text: str) -> np.ndarray:
    words = text.lower().split()
    vec = np.zeros(64, dtype=np.float32)
    for word in words:
        group = next((min(g) for g in SYNONYMS if word in g), word)
        seed = int(hashlib.sha256(group.encode()).hexdigest()[:8], 16)
        vec += np.random.default_rng(seed).normal(size=64).astype(np.float32)
        if word in CODE_WORDS:
            # code words share a component with the anchors ("code" group), so they pass the filter
            anchor = int(hashlib.sha256(b"code").hexdigest()[:8], 16)
            vec += 1.2 * np.random.default_rng(anchor).normal(size=64).astype(np.float32)
    return vec


def tiny_embedder(cache: bool = True) -> CachedEmbedder:
    return CachedEmbedder(
        lambda texts, batch_size: np.stack([_vector(t) for t in texts]), cache=cache
    )


def droppable_keyword(
    problem: Problem, word: str, start: int, end: int, **decision: Any
) -> KeywordDecision:
    """`word` as a droppable keyword decided by hand (what KeyBERT and the filters would say,
    so no embedder is needed), its one occurrence `problem.prompt[start:end]`; `decision` gives
    the rule that kept it and that rule's evidence."""
    return KeywordDecision(
        keyword=word,
        keybert_score=0.5,
        best_anchor="Code",
        anchor_similarity=0.5,
        droppable=True,
        occurrences=(Occurrence(start, end, problem.prompt[start:end]),),
        **decision,
    )
