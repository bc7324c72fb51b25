"""What a variant changed in its prompt, as marked segments of the original and the variant.

Removed text comes from the lineage (`changes.removed[*].spans`, in the original prompt's
coordinates), so the report shows exactly what the transformation says it removed. Whatever else
differs (a renamed function, or any change a transformation did not describe) is found by a
token-level diff of the original-minus-removals against the variant, so nothing that changed
goes unmarked.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.problem import Problem

TOKEN = re.compile(r"\w+|\s+|[^\w\s]")

# Segment classes: text removed by the transformation; text replaced (a rename) on either side;
# text present only in the variant.
REMOVED, REPLACED, ADDED = "removed", "replaced", "added"


@dataclass(frozen=True)
class Segment:
    text: str
    mark: str | None = None


@dataclass(frozen=True)
class PromptDiff:
    original: tuple[Segment, ...]
    variant: tuple[Segment, ...]
    warnings: tuple[str, ...] = ()


def removed_spans(
    variant: Problem, original_prompt: str
) -> tuple[list[tuple[int, int]], list[str]]:
    """The lineage's removal spans (merged, sorted) and warnings when they do not fit the prompt."""
    if len(variant.lineage) != 1:
        # Spans are in the coordinates of the problem a step was applied to; only a one-step
        # variant's spans are in the original's.
        return [], []
    changes: Mapping[str, Any] = variant.lineage[-1].changes
    spans: list[tuple[int, int]] = []
    for entry in changes.get("removed", ()) or ():
        texts = list(entry.get("texts", ()) or ())
        for i, span in enumerate(entry.get("spans", ()) or ()):
            start, end = int(span[0]), int(span[1])
            if not 0 <= start <= end <= len(original_prompt):
                return [], [f"removal span {start}-{end} lies outside the original prompt"]
            if i < len(texts) and original_prompt[start:end] != texts[i]:
                return [], [
                    f"removal span {start}-{end} does not hold the recorded text {texts[i]!r}; "
                    "the problems file does not match the variant's original"
                ]
            spans.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged, []


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in TOKEN.finditer(text)]


def _pieces(indices: Sequence[int]) -> list[tuple[int, int]]:
    """Contiguous (start, end) ranges of sorted character indices."""
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][1] == i:
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def _segments(text: str, marks: Sequence[tuple[int, int, str]]) -> tuple[Segment, ...]:
    out, cursor = [], 0
    for start, end, mark in sorted(marks):
        start = max(start, cursor)
        if start >= end:
            continue
        if start > cursor:
            out.append(Segment(text[cursor:start]))
        out.append(Segment(text[start:end], mark))
        cursor = end
    if cursor < len(text):
        out.append(Segment(text[cursor:]))
    return tuple(out)


def diff_prompts(original_prompt: str, variant: Problem) -> PromptDiff:
    """Marked segments of the original (removed, replaced) and the variant (replaced, added)."""
    spans, warnings = removed_spans(variant, original_prompt)
    # The original without the removed spans, tokenized as one text (so tokens join across a
    # removal as they do in the variant), each token mapped back to its original pieces.
    keep = [True] * len(original_prompt)
    for start, end in spans:
        keep[start:end] = [False] * (end - start)
    positions = [i for i, kept in enumerate(keep) if kept]
    kept_text = "".join(original_prompt[i] for i in positions)
    kept = _tokens(kept_text)
    after = _tokens(variant.prompt)
    matcher = difflib.SequenceMatcher(
        None, [t[0] for t in kept], [t[0] for t in after], autojunk=False
    )
    original_marks = [(start, end, REMOVED) for start, end in spans]
    variant_marks = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            continue
        for _, start, end in kept[a0:a1]:
            for piece in _pieces(positions[start:end]):
                original_marks.append((*piece, REMOVED if op == "delete" else REPLACED))
        for _, start, end in after[b0:b1]:
            variant_marks.append((start, end, ADDED if op == "insert" else REPLACED))
    return PromptDiff(
        _segments(original_prompt, _join(original_marks)),
        _segments(variant.prompt, _join(variant_marks)),
        tuple(warnings),
    )


def _join(marks: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Adjacent marks of one kind as one range (a renamed name is one mark, not its tokens)."""
    out: list[tuple[int, int, str]] = []
    for start, end, mark in sorted(marks):
        if out and out[-1][2] == mark and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end), mark)
        else:
            out.append((start, end, mark))
    return out
