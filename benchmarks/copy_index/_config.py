"""What an index is built with: `IndexConfig` (an index is rebuilt when any of it changes), and
the field names a corpus row's code and name are looked for under."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.common.errors import UserError

# A corpus row's code and name, when the user names no field: the usual column names of code
# datasets (The Stack and CodeParrot: content / path; MBPP-like files: code; plain dumps: text).
TEXT_FIELDS = ("content", "code", "text", "completion", "source", "solution")
NAME_FIELDS = (
    "path",
    "max_stars_repo_path",
    "file_path",
    "filepath",
    "repo_path",
    "task_id",
    "id",
)


@dataclass(frozen=True)
class IndexConfig:
    """How a corpus is cut, hashed and indexed (an index is rebuilt when any of these change)."""

    shingle: int = field(default=5, metadata={"help": "tokens per shingle"})
    num_perm: int = field(default=128, metadata={"help": "MinHash permutations"})
    threshold: float = field(
        default=0.5,
        metadata={
            "help": "MinHashLSH Jaccard threshold: units less similar than this are rarely "
            "candidates"
        },
    )
    min_tokens: int = field(
        default=20,
        metadata={
            "help": "units (and completions) with fewer tokens are not indexed (searched): too "
            "short to be evidence of copying"
        },
    )
    max_doc_tokens: int = field(
        default=2000,
        metadata={"help": "a whole document is a unit too when it has at most this many tokens"},
    )
    max_file_bytes: int = field(
        default=1_000_000,
        metadata={"help": "larger corpus files (generated or minified code) are skipped, counted"},
    )
    include: tuple[str, ...] = field(
        default=(),
        metadata={"help": "only corpus files whose name matches one of these globs (empty: all)"},
    )
    text_field: str = field(
        default="",
        metadata={
            "help": "the code field of a JSONL/Parquet/dataset corpus (empty: the first of "
            + ", ".join(TEXT_FIELDS)
            + ")"
        },
    )
    split: str = field(default="train", metadata={"help": "the split of a dataset corpus"})

    def __post_init__(self) -> None:
        if self.shingle < 1:
            raise UserError(f"shingle must be at least 1, not {self.shingle}.")
        if self.num_perm < 16:
            raise UserError(f"num_perm must be at least 16, not {self.num_perm}.")
        if not 0.0 < self.threshold < 1.0:
            raise UserError(f"threshold must be between 0 and 1, not {self.threshold}.")
        if self.min_tokens < self.shingle:
            raise UserError(
                f"min_tokens ({self.min_tokens}) must be at least shingle ({self.shingle})."
            )
