"""Droppable keywords: KeyBERT candidates, then the paper's filters (section 5.2).

For each problem, KeyBERT proposes unigram and bigram candidates from the description. A
candidate is *droppable* when

1. it is code-related: its cosine similarity to at least one anchor word
   (`Python, Programming, Code, Variable`) reaches `code_threshold`; and
2. the information it carries can be recovered from the rest of the challenge, by one of
   - the context-aware filter: some other token of the challenge (not itself a candidate word in
     the keyword blocks) has similarity above `context_threshold`;
   - the type-keyword rule: the keyword names a type (list, integer, string, ...) and an
     instance of that type appears in the examples or the name block;
   - the first-occurrence rule: the keyword occurs several times; its first occurrence stays
     (and is never dropped), later ones can go.

Every candidate's decision is recorded (`KeywordDecision`): KeyBERT score, best anchor and its
similarity, the context token that made it recoverable, or the rule that rejected it.

Speed: KeyBERT is slow per document. `analyze_keywords` embeds each distinct string (document,
candidate n-gram, context token, anchor) once for the whole dataset through `CachedEmbedder`
and calls KeyBERT once with precomputed embeddings.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypedDict

import numpy as np

from benchmarks.common.errors import UserError
from benchmarks.common.models import EMBEDDED_EMBEDDER, load_sentence_transformer
from benchmarks.common.progress import progress_bar
from benchmarks.languages import language_named
from benchmarks.languages.source import code_only, comment_prose, parameter_names
from benchmarks.problem import Problem
from perturb.blocks import block_offsets
from perturb.words import CLOSED_CLASS

# Types a description may name, and how an instance of each shows in a signature or an example.
TYPE_KEYWORDS: dict[str, str] = {
    "list": "list", "lists": "list", "array": "list", "arrays": "list",
    "element": "list", "elements": "list", "sequence": "list",
    "tuple": "tuple", "tuples": "tuple",
    "dict": "dict", "dicts": "dict", "dictionary": "dict", "dictionaries": "dict",
    "string": "str", "strings": "str", "str": "str", "substring": "str", "substrings": "str",
    "character": "str", "characters": "str", "char": "str", "chars": "str",
    "integer": "int", "integers": "int", "int": "int", "digit": "int", "digits": "int",
    "float": "float", "floats": "float", "decimal": "float",
    "boolean": "bool", "bool": "bool", "booleans": "bool", "true": "bool", "false": "bool",
    "none": "none",
    "set": "set", "sets": "set",
    "number": "number", "numbers": "number", "numeric": "number",
    # The shape of the data, where the examples show it (the kind of sequence that comes in).
    "real": "float",
    "nested": "nested", "matrix": "nested", "grid": "nested", "dimensional": "nested",
    "row": "nested", "rows": "nested", "column": "nested", "columns": "nested",
    "lowercase": "lowercase", "uppercase": "uppercase",
    "letter": "letters", "letters": "letters", "alphabetic": "letters",
    "word": "words", "words": "words", "sentence": "spaced", "sentences": "spaced",
    "space": "spaced", "spaces": "spaced", "whitespace": "spaced", "whitespaces": "spaced",
    "blank": "spaced", "comma": "comma", "commas": "comma", "separated": "separated",
}  # fmt: skip
"""Words whose information an instance in the signature or the examples carries: the paper's
type keywords, and words for the shape of the data (nesting, letter case, separators), whose
instance is as plain in an example as a list's brackets. Sign, emptiness and order are not
here: they are constraints (`CONSTRAINT_WORDS`)."""

VALUE_TYPES = frozenset(
    {"list", "tuple", "dict", "str", "int", "float", "bool", "none", "set", "number"}
)
"""The `TYPE_KEYWORDS` kinds that are a value's type (not the shape of its data): a parameter's
name recovers a word of these kinds, since the signature shows the type (see `_decide`)."""

CONSTRAINT_WORDS = frozenset(
    {
        # sign and zero
        "positive", "negative", "nonnegative", "nonpositive", "zero", "nonzero",
        # emptiness
        "empty", "nonempty",
        # distinctness
        "distinct", "unique", "different",
        # order
        "sorted", "unsorted", "ordered", "ascending", "descending", "increasing",
        "decreasing", "nondecreasing", "nonincreasing",
        # bounds
        "inclusive", "exclusive", "strictly",
        # parity and integrality of a value
        "even", "odd", "natural",
    }
)  # fmt: skip
"""Words that restrict the domain of an input or an output (its sign, emptiness, distinctness,
order, bounds, parity): the classes, not words met in a labelled set. Their loss changes the
task ("a list of positive integers" is not "a list of integers"), and the paper requires that a
drop not change the description's semantics. Examples that merely agree with a constraint do
not state it (three positive inputs do not say the input is always positive), and an embedding
neighbour is no evidence either (a constraint's nearest words are its opposites: `positive` /
`negative`, `even` / `odd`, `ascending` / `descending`). So a constraint word is recoverable
only where the rest of the challenge says the word itself: the function's name (`get_positive`,
`sort_array`), the examples' text, or an earlier occurrence (the first-occurrence rule); else
it is not droppable (rule `constraint`)."""


def _literal(inside: str) -> re.Pattern[str]:
    """A quoted string literal with `inside` somewhere in it."""
    return re.compile(rf"'[^'\n]*{inside}[^'\n]*'|\"[^\"\n]*{inside}[^\"\n]*\"")


_TYPE_EVIDENCE: dict[str, re.Pattern[str]] = {
    "list": re.compile(r"\b[Ll]ist\b|\["),
    "tuple": re.compile(r"\b[Tt]uple\b|\(\s*[^()\s,]+\s*,"),
    "dict": re.compile(r"\b[Dd]ict\b|\{[^{}]*:"),
    "str": re.compile(r"\bstr\b|'[^'\n]*'|\"[^\"\n]*\""),
    "int": re.compile(r"\bint\b|(?<![\w.])-?\d+(?![\w.])"),
    "float": re.compile(r"\bfloat\b|\d+\.\d+"),
    "bool": re.compile(r"\bbool\b|\bTrue\b|\bFalse\b"),
    "set": re.compile(r"\b[Ss]et\b|\{[^{}:]*\}"),
    "none": re.compile(r"\bNone\b|\bOptional\b"),
    "number": re.compile(r"\b(?:int|float)\b|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])"),
    "nested": re.compile(r"\[\s*\[|\(\s*\(|\bList\[List\["),
    "lowercase": _literal("[a-z]"),
    "uppercase": _literal("[A-Z]"),
    "letters": _literal("[A-Za-z]"),
    "words": _literal("[A-Za-z]{2,}"),
    "spaced": _literal("[A-Za-z0-9] +[A-Za-z0-9]"),
    "comma": _literal(","),
    "separated": _literal("[A-Za-z0-9](?: +|,) *[A-Za-z0-9]"),
}
PART_WORDS = frozenset(
    {"element", "elements", "character", "characters", "char", "chars",
     "letter", "letters", "word", "words"}
)  # fmt: skip
"""Words for the *members* of a value (a list's elements, a string's characters, letters or
words), not for its type: an instance of a list in the examples shows that a list comes in, not
that the description's "elements" are a hint the reader could restore, so the type rule does
not recover them (they stay code-related and may still be recovered by the name, the context
or a repetition: `max_element`, "the element" said twice)."""
SHAPE_BY_MAJORITY = frozenset(
    {"nested", "lowercase", "uppercase", "letters", "words", "spaced", "comma", "separated"}
)  # fmt: skip
"""Data-shape evidence that must hold for most of the example calls, not for one: a space in
one of three example strings is a case the function handles ("keep the blank spaces"), not
the shape of its input, which a reader would not restore from it."""
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
ARTICLE = re.compile(r"(?:\b(?:the|a|an)\s+)$", re.IGNORECASE)
ARTICLE_PREFIX = re.compile(r"^(?:the|a|an)\s+")
QUOTES = "'\"`"
MAX_DESCRIPTION_CHARS = 20_000
"""The longest keyword-block text looked at: ten times the longest description of HumanEval,
MBPP and the CodeContests sample (2,071 characters). A longer one (a 10 MB docstring) is not
a task statement a person wrote; KeyBERT and the per-occurrence scans grow faster than its
length, so it is skipped with the reason recorded, never truncated (keywords of a cut text
would be dropped from a prompt they do not describe)."""
PROMPT_INSTRUCTIONS = frozenset(
    {"write", "function", "python", "given", "program", "task", "return", "returns", "check",
     "checks", "find", "get", "test", "tests"}
)  # fmt: skip
"""Words of the instruction every prompt gives: never a hint, even where the function's name
repeats them (`find_max`, `check_dict_case`, `get_row`)."""


@dataclass(frozen=True)
class KeywordConfig:
    """How droppable keywords are chosen. Defaults are calibrated for the embedded
    all-MiniLM-L6-v2 (docs/explanation/blocks-and-keywords.md, "Keyword quality"); the paper's values for its
    code-fine-tuned embedder are code_threshold=0.7, context_threshold=0.7."""

    embedder: str = field(
        default=EMBEDDED_EMBEDDER,
        metadata={
            "help": "sentence-transformers model name or path; `embedded` = all-MiniLM-L6-v2 from the wheel"
        },
    )
    anchors: tuple[str, ...] = field(
        default=("Python", "Programming", "Code", "Variable"),
        metadata={"help": "words that define 'code-related' (paper section 5.2)"},
    )
    code_threshold: float = field(
        default=0.45,
        metadata={
            "help": "minimum cosine similarity to some anchor for a candidate to count as code-related"
        },
    )
    context_threshold: float = field(
        default=0.6,
        metadata={
            "help": "a context token above this similarity makes the candidate recoverable (strictly above)"
        },
    )
    top_n: int = field(default=30, metadata={"help": "KeyBERT candidates per problem"})
    ngram_range: tuple[int, int] = field(
        default=(1, 2), metadata={"help": "unigram and bigram candidates"}
    )
    keyword_blocks: tuple[str, ...] = field(
        default=("description", "io_spec"),
        metadata={
            "help": "blocks whose prose keywords are taken from (io_spec exists for CodeContests only)"
        },
    )
    extra_stop_words: tuple[str, ...] = field(
        default=(
            # the instruction every prompt gives
            "write", "function", "python", "given", "program", "task", "return", "returns",
            "check", "checks", "find",
            # contest boilerplate around every statement
            "input", "output", "print", "test", "tests", "case", "cases", "line", "lines",
            "single", "contains", "consisting", "example", "examples", "note",
            # generic nouns that carry no recoverable hint ("in order", "a threshold")
            "value", "values", "order", "threshold", "way", "following",
        ),
        metadata={
            "help": "boilerplate of every prompt, never worth dropping, added to sklearn's "
            "English stop words (type keywords such as none are never stop words)"
        },
    )  # fmt: skip
    code_vocabulary: str = field(
        default="embedded",
        metadata={
            "help": "words code itself uses, which count as code-related whatever the "
            "embedder says: a file with one word per line, `embedded` (Python identifiers of "
            "the standard library, perturb/data/code_vocabulary.txt) or `none`"
        },
    )
    generic_phrases: tuple[str, ...] = field(
        default=("number of",),
        metadata={
            "help": "phrases in which a keyword is generic, not a hint: `number` in 'the number "
            "of' counts, in 'an input number' it names the data; occurrences starting such a "
            "phrase are never dropped"
        },
    )
    context_aware: bool = field(
        default=True,
        metadata={
            "help": "the context-aware filter; off = every code-related candidate is droppable (paper Table 2 ablation)"
        },
    )
    type_rule: bool = field(
        default=True,
        metadata={
            "help": "type keywords are droppable when an instance of the type is in the examples or signature"
        },
    )
    first_occurrence_rule: bool = field(
        default=True,
        metadata={"help": "a repeated keyword's later occurrences are droppable (the first stays)"},
    )
    batch_size: int = field(default=128, metadata={"help": "texts per embedder call"})

    def __post_init__(self) -> None:
        for name in ("code_threshold", "context_threshold"):
            value = getattr(self, name)
            if not -1.0 <= value <= 1.0:
                raise UserError(
                    f"keywords.{name} is {value}; a cosine similarity threshold must lie in [-1, 1]."
                )
        if self.top_n < 1:
            raise UserError(f"keywords.top_n is {self.top_n}; it must be at least 1.")
        lo, hi = self.ngram_range
        if not 1 <= lo <= hi:
            raise UserError(f"keywords.ngram_range is {self.ngram_range}; use (1, 1) or (1, 2).")
        if not self.anchors:
            raise UserError(
                "keywords.anchors is empty; give at least one anchor word such as 'Code'."
            )


class Embedder(Protocol):
    """Anything that maps texts to L2-normalised vectors (rows)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class CachedEmbedder:
    """Embeds each distinct text once; later calls reuse the stored vectors."""

    def __init__(self, embed_fn: Any, batch_size: int = 128, cache: bool = True) -> None:
        self._embed_fn = embed_fn
        self._batch_size = batch_size
        self._cache: dict[str, np.ndarray] | None = {} if cache else None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._cache is None:
            return self._normalise(self._embed_fn(list(texts), self._batch_size))
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            vectors = self._normalise(self._embed_fn(missing, self._batch_size))
            self._cache.update(zip(missing, vectors, strict=True))
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self._cache[t] for t in texts])

    @staticmethod
    def _normalise(vectors: Any) -> np.ndarray:
        array = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        return array / np.maximum(norms, 1e-12)


def sentence_transformer_embedder(
    name_or_path: str, batch_size: int = 128, cache: bool = True
) -> CachedEmbedder:
    model = load_sentence_transformer(name_or_path)
    return CachedEmbedder(functools.partial(encode_with_progress, model), batch_size, cache)


def encode_with_progress(model: Any, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """`model.encode(texts)` (a SentenceTransformer) as one call, with a bar over the texts
    (done, ETA) when there is more than one batch.

    One call, so the batches are sentence-transformers' own (sorted by length, `batch_size`
    texts each): a batch is padded to its longest text, and other batches (fewer padded
    tokens) change the vectors in the 7th decimal, enough to move a recorded similarity's 4th
    (scripts/bench_perturb.py keeps the variants byte-identical). The bar counts the
    embeddings each forward pass returns.
    """
    texts = list(texts)
    if len(texts) <= batch_size:
        return np.asarray(
            model.encode(
                texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        )
    update = progress_bar(len(texts), "embed", unit="text")
    done = 0

    def count(_module: Any, _inputs: Any, output: Any) -> None:
        nonlocal done
        done = min(len(texts), done + len(output["sentence_embedding"]))
        update(done, len(texts))

    handle = model.register_forward_hook(count)
    try:
        return np.asarray(
            model.encode(
                texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False
            )
        )
    finally:
        handle.remove()


@dataclass(frozen=True)
class Occurrence:
    """Where a keyword occurs in the prompt: the span removed when it is dropped.

    `start` includes a preceding article ("the list" goes as a pair, paper section 5.1) and one
    separating space, so the sentence closes up cleanly.
    """

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class KeywordDecision:
    """Why a KeyBERT candidate is or is not droppable."""

    keyword: str
    keybert_score: float
    best_anchor: str
    anchor_similarity: float
    droppable: bool
    rule: str
    """`context`, `name`, `type`, `repeated` (droppable), or the rejecting rule: `code_filter`,
    `no_context`, `overlaps_keyword`, `not_a_whole_word` (the n-gram is only part of a word in
    the text, e.g. `negative` in "non-negative" or `max` in `max_element`), `generic_phrase`
    (every occurrence starts a generic phrase such as "number of" that is not said again),
    `identifier` (the word is
    code: a parameter's or the function's name as written, `xs`, `lst`, or a function the
    description calls, `ord(`), `same_word` (an inflection or a stemming fragment of a
    higher-ranked droppable keyword, merged into it: see `forms`), `related_name` (only the
    function's name recovers it, through a related word rather than the word itself),
    `constraint` (a word restricting a value's domain, `positive`, `empty`, `sorted`, that the
    rest of the challenge does not say: `CONSTRAINT_WORDS`), `parameter_only` (only a
    parameter's name recovers it and it is not the name of the parameter's type:
    `_parameter_only`), `phrase_of_word` (a phrase beside a pick of one of its own words: the
    same hint twice)."""
    context_token: str | None = None
    context_similarity: float | None = None
    occurrences: tuple[Occurrence, ...] = ()
    """The occurrences a drop removes (not the first one when the first-occurrence rule applies)."""
    needs_name: bool = False
    """Droppable only because the function's name recovers it (`median` in `median(l)`):
    Anonymize removes that evidence, so the chains that also anonymize keep such a keyword."""
    forms: tuple[str, ...] = ()
    """Other surface forms of the same word merged into this keyword (`groups` with `group`,
    `sorted` with `sorting`): one pick per word, whose occurrences are all of them."""

    @property
    def words(self) -> tuple[str, ...]:
        """The lower-cased words a drop removes: the keyword's, then its merged forms."""
        return tuple(
            dict.fromkeys(w.lower() for text in (self.keyword, *self.forms) for w in text.split())
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KeywordAnalysis:
    """All candidate decisions for one problem; `droppable` keeps KeyBERT's order."""

    task_id: str
    decisions: tuple[KeywordDecision, ...] = ()
    skipped: str | None = None
    """Why no keywords were looked for (no description block, ...), or None."""

    @property
    def droppable(self) -> tuple[KeywordDecision, ...]:
        return tuple(d for d in self.decisions if d.droppable)

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "skipped": self.skipped,
            "droppable": [d.keyword for d in self.droppable],
            "droppable_words": list(dict.fromkeys(w for d in self.droppable for w in d.words)),
            "decisions": [d.to_json() for d in self.decisions],
        }


@dataclass
class _Doc:
    problem: Problem
    text: str
    spans: list[tuple[int, int]]  # keyword-block spans in the prompt
    context_tokens: list[str] = field(default_factory=list)
    name_free_tokens: list[str] = field(default_factory=list)
    """The context tokens that remain once the function's name is gone (as after Anonymize)."""
    parameter_free_tokens: list[str] = field(default_factory=list)
    """The context tokens that remain once the parameters' names are gone from the signature:
    what recovers a word other than a parameter's name (`_decide`, rule `parameter_only`)."""
    function_pieces: tuple[str, ...] = ()
    """The lower-cased parts of the function's name (`max`, `element` of `max_element`)."""
    parameter_pieces: tuple[str, ...] = ()
    """The lower-cased parameter names and their parts (`test_tup1`, `test`, `tup1`)."""
    context_vectors: np.ndarray | None = None
    """`context_tokens` embedded, once per problem (every decision compares with them)."""
    identifiers: frozenset[str] = frozenset()
    code_words: frozenset[str] = frozenset()
    """Words that are code in the problem's language, whatever the embedder says (languages
    other than Python): its reserved words and the words of the prompt's own identifiers
    outside comments and strings (`vector`, `is_palindrome`, `List`)."""
    """Whole identifiers a description may write as code: the function's and the parameters'
    names, and names the description calls (`ord` in "ord('a')")."""

    @property
    def identifier_words(self) -> set[str]:
        """The lower-cased parts of the name block's identifiers (function, parameters, hints)."""
        name = self.problem.block("name")
        return set(_words(name.text)) if name is not None else set()


@functools.cache
def _stop_words(extra_stop_words: tuple[str, ...]) -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    # sklearn's list holds `none`, which a description uses for Python's None.
    return sorted((set(ENGLISH_STOP_WORDS) | set(extra_stop_words)) - set(TYPE_KEYWORDS))


def _words(text: str) -> list[str]:
    """Lower-cased words, with identifiers also split at underscores and camelCase."""
    out = []
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text):
        parts = [
            p
            for chunk in token.split("_")
            for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", chunk)
        ]
        out += [p.lower() for p in parts if len(p) > 1]
        if len(parts) > 1:
            out.append(token.lower())
    return out


def _occurrences(prompt: str, spans: list[tuple[int, int]], keyword: str) -> list[Occurrence]:
    pattern = re.compile(
        r"(?<![\w-])" + r"\s+".join(map(re.escape, keyword.split())) + r"(?![\w-])", re.IGNORECASE
    )
    found = []
    for lo, hi in spans:
        for match in pattern.finditer(prompt, lo, hi):
            start, end = match.start(), match.end()
            # A quoted keyword (`numbers', 'x', "s") goes with its quotes: left alone they
            # are debris no person would write.
            if lo < start and end < hi and prompt[start - 1] in QUOTES and prompt[end] in QUOTES:
                start, end = start - 1, end + 1
            article = ARTICLE.search(prompt, lo, start)
            if article:
                start = article.start()
            if end < hi and prompt[end] == " ":
                end += 1
            elif start > lo and prompt[start - 1] == " ":
                start -= 1
            found.append(Occurrence(start, end, prompt[start:end]))
    return found


EMBEDDED_CODE_VOCABULARY = Path(__file__).parent / "data" / "code_vocabulary.txt"


@functools.lru_cache(maxsize=8)
def code_vocabulary(source: str) -> frozenset[str]:
    """The words of `KeywordConfig.code_vocabulary` (lower-cased; `#` lines are comments)."""
    if source.lower() == "none":
        return frozenset()
    path = EMBEDDED_CODE_VOCABULARY if source == "embedded" else Path(source)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(
            f"keywords.code_vocabulary {source!r} cannot be read ({type(err).__name__}); give "
            "a UTF-8 file with one word per line, 'embedded' or 'none'."
        ) from None
    return frozenset(w.strip().lower() for w in lines if w.strip() and not w.startswith("#"))


def _singular(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + replacement
    return word


@functools.lru_cache(maxsize=1)
def _stemmer() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Porter's stem: a word and its inflections share it (`palindromes`, `palindrome`)."""
    return str(_stemmer().stem(word.lower()))


@functools.lru_cache(maxsize=65536)
def _is_english(word: str) -> bool:
    """Whether `word` is an English word (lemminflect's tables know a lemma for it) or a type
    keyword; `xs`, `lst`, `arr`, `ord` are not."""
    import lemminflect

    word = word.lower()
    return word in TYPE_KEYWORDS or bool(lemminflect.getAllLemmas(word))


def _parameters(problem: Problem) -> list[str]:
    """The parameters' names of the name block's signature (none when it does not parse)."""
    import ast

    name = problem.block("name")
    if name is None:
        return []
    if problem.language != "python":
        return parameter_names(name.text, language_named(problem.language))
    try:
        tree = ast.parse(name.text.strip() + "\n    pass\n")
    except SyntaxError:
        return []
    return [node.arg for node in ast.walk(tree) if isinstance(node, ast.arg)]


def _signature_pieces(problem: Problem) -> tuple[tuple[str, ...], tuple[str, ...], set[str]]:
    """The function's name parts, the parameters' names and parts, and the whole identifiers
    (function and parameter names) of the name block."""
    entry = problem.entry_point or ""
    params = _parameters(problem)
    identifiers = {entry.lower(), *(p.lower() for p in params)} - {""}
    function = _words(entry)
    # A name piece that is not a word but an abbreviation glued to a parameter's name
    # (`modp(n, p)`: `mod` + `p`) also gives the abbreviation alone, which recovers the word it
    # shortens ("modulo"), as `max` in `max_element` recovers "maximum".
    for piece in list(function):
        for param in {p.lower() for p in params}:
            stem = piece[: -len(param)]
            if (
                piece.endswith(param)
                and len(stem) >= MIN_ABBREVIATION
                and not _is_english(piece)
                and stem not in function
            ):
                function.append(stem)
    return tuple(function), tuple(w for p in params for w in _words(p)), identifiers


# A piece of the signature recovers a description word when it is the word, shares its stem
# (`palindrome` / `palindromes`, `concatenate` / `concatenation`) or abbreviates it: its
# letters, at least three, start the word (`max` / `maximum`, `incr` / `incremented`,
# `paren` / `parentheses`, `fib4` / `fibonacci`, `tup1` / `tuple`).
MIN_ABBREVIATION = 3


def _recovers(piece: str, word: str) -> bool:
    if piece == word or _stem(piece) == _stem(word):
        return True
    letters = re.match(r"[a-z]*", piece)
    prefix = letters.group() if letters else ""
    return len(prefix) >= MIN_ABBREVIATION and len(word) > len(prefix) and word.startswith(prefix)


def _name_evidence(doc: _Doc, word: str) -> str | None:
    """`parameter` or `function` when a piece of the signature recovers `word` (a parameter
    first: it survives Anonymize), else None."""
    word = word.lower()
    if any(_recovers(piece, word) for piece in doc.parameter_pieces):
        return "parameter"
    if any(_recovers(piece, word) for piece in doc.function_pieces):
        return "function"
    return None


@functools.lru_cache(maxsize=65536)
def _is_term(word: str) -> bool:
    """Whether `word` can name a thing or a property (lemminflect knows a noun or adjective
    reading of it): a term a task defines, unlike a verb it restates (`represents`,
    `supplied`) or a closed-class word."""
    import lemminflect

    word = word.lower()
    if word in CLOSED_CLASS:
        return False
    readings = lemminflect.getAllLemmas(word)
    return not readings or bool({"NOUN", "ADJ", "PROPN"} & set(readings))


def _is_identifier(doc: _Doc, word: str) -> bool:
    """A word of the description that is code: an identifier of the signature, or a function
    the description calls, as written and not an English word (`xs`, `lst`, `arr`, `ord`)."""
    word = word.lower()
    return word in doc.identifiers and not _is_english(word)


def _code_by_definition(doc: _Doc, keyword: str, vocabulary: frozenset[str]) -> bool:
    """Code-related whatever the embedder says: every word is a type keyword (`integers`,
    `None`), part of an identifier of the signature (`mean` in `mean_absolute_deviation`), or
    in the code vocabulary (`index`, `sorted`, `node`): words code itself uses. A contest
    title is prose, not an identifier, so it does not count."""
    identifiers = set() if doc.problem.is_stdio else doc.identifier_words
    identifiers |= doc.code_words
    return all(
        w in TYPE_KEYWORDS
        or w in identifiers
        or w in vocabulary
        or _singular(w) in vocabulary
        or _singular(w) in identifiers
        or (not doc.problem.is_stdio and _name_evidence(doc, w) is not None)
        for w in keyword.lower().split()
    )


def _starts_generic_phrase(prompt: str, occurrence: Occurrence, config: KeywordConfig) -> bool:
    """Whether the keyword at `occurrence` begins one of `config.generic_phrases`."""
    keyword = prompt[occurrence.start : occurrence.end].strip().lower()
    following = re.sub(r"\s+", " ", prompt[occurrence.start : occurrence.end + 40].lower())
    following = ARTICLE_PREFIX.sub("", following.strip())
    return any(
        phrase.startswith(keyword.split()[-1]) and following.startswith(phrase + " ")
        for phrase in config.generic_phrases
    )


def _example_calls(problem: Problem) -> list[str]:
    """The examples block cut into one piece per call of the function (from a call to the next,
    so a call spread over several lines stays whole), or none when no example calls it."""
    examples = problem.block("examples")
    entry = problem.entry_point
    if examples is None or not entry:
        return []
    starts = [m.start() for m in re.finditer(rf"\b{re.escape(entry)}\(", examples.text)]
    ends = [*starts[1:], len(examples.text)]
    return [examples.text[a:b] for a, b in zip(starts, ends, strict=False)]


def _with_phrase(prompt: str, occurrence: Occurrence, config: KeywordConfig) -> Occurrence:
    """`occurrence` (which starts a generic phrase) stretched over the rest of the phrase and
    one following space: "the number " becomes "the number of "."""
    start, _ = _core(occurrence)
    for phrase in config.generic_phrases:
        words = r"\s+".join(map(re.escape, phrase.split()))
        match = re.compile(rf"(?:(?:the|a|an)\s+)?{words}\b[ \t]?", re.IGNORECASE).match(
            prompt, start
        )
        if match and match.end() > occurrence.end:
            return Occurrence(occurrence.start, match.end(), prompt[occurrence.start : match.end()])
    return occurrence


def _type_evidence(problem: Problem, keyword: str) -> bool:
    keyword = keyword.lower()
    type_name = TYPE_KEYWORDS.get(keyword)
    if type_name is None or keyword in PART_WORDS:
        return False
    evidence = "".join(b.text for b in problem.blocks or () if b.kind in ("name", "examples"))
    pattern = _TYPE_EVIDENCE[type_name]
    if type_name in SHAPE_BY_MAJORITY:
        name = problem.block("name")
        calls = _example_calls(problem)
        if name is not None and pattern.search(name.text):
            return True
        if calls:
            return 2 * sum(bool(pattern.search(line)) for line in calls) > len(calls)
    return bool(pattern.search(evidence))


def _prepare(problem: Problem, config: KeywordConfig) -> _Doc | str:
    if problem.blocks is None:
        return "the problem has not been split into blocks"
    spans = [
        (lo, hi) for b, lo, hi in block_offsets(problem.blocks) if b.kind in config.keyword_blocks
    ]
    if not spans or "description" in problem.absent_blocks:
        return "the problem has no description block"
    size = sum(hi - lo for lo, hi in spans)
    if size > MAX_DESCRIPTION_CHARS:
        return (
            f"the description of {problem.task_id} has {size:,} characters, over the "
            f"{MAX_DESCRIPTION_CHARS:,} keyword extraction reads; no keywords are dropped"
        )
    text = " ".join(problem.prompt[lo:hi] for lo, hi in spans)
    code_words: frozenset[str] = frozenset()
    if problem.language != "python":
        # A comment's markers (`//`, `/*`, a Javadoc's `*`) are not prose: KeyBERT reads the
        # text a reader reads, and the code filter knows the language's own words.
        language = language_named(problem.language)
        text = comment_prose(text, language)
        code_words = frozenset(w.lower() for w in language.reserved_words) | frozenset(
            _words(code_only(problem.prompt, language))
        )
    if not WORD.search(text):
        return "the description has no words"
    doc = _Doc(problem, text, spans, code_words=code_words)
    if not problem.is_stdio:
        function, parameters, identifiers = _signature_pieces(problem)
        called = {m.lower() for m in re.findall(r"\b([A-Za-z_]\w*)\(", text)}
        doc.function_pieces, doc.parameter_pieces = function, parameters
        doc.identifiers = frozenset(identifiers | called)
    return doc


def analyze_keywords(
    problems: Sequence[Problem],
    config: KeywordConfig | None = None,
    embedder: Embedder | None = None,
) -> list[KeywordAnalysis]:
    """Droppable keywords with every decision, for a whole dataset in batched calls.

    `problems` must be split (`perturb.split_blocks`). Problems without a description get an
    analysis with `skipped` set; the rest of the dataset is still processed.
    """
    config = config or KeywordConfig()
    embedder = embedder or sentence_transformer_embedder(config.embedder, config.batch_size)
    prepared = [_prepare(p, config) for p in problems]
    docs = [d for d in prepared if isinstance(d, _Doc)]
    candidates = _keybert_candidates([d.text for d in docs], config, embedder) if docs else []
    if config.type_rule:
        candidates = [_with_type_keywords(d.text, c) for d, c in zip(docs, candidates, strict=True)]
    candidates = [_with_name_words(d, c) for d, c in zip(docs, candidates, strict=True)]
    anchors = embedder.embed(list(config.anchors))

    results: dict[int, KeywordAnalysis] = {}
    all_tokens: set[str] = set()
    for doc, cands in zip(docs, candidates, strict=True):
        candidate_words = {w for keyword, _ in cands for w in keyword.lower().split()}
        outside = "".join(
            doc.problem.prompt[hi:lo]
            for (_, hi), (lo, _) in zip(
                [(0, 0), *doc.spans], [*doc.spans, (len(doc.problem.prompt), 0)], strict=True
            )
        )
        inside = " ".join(doc.problem.prompt[lo:hi] for lo, hi in doc.spans)
        tokens = set(_words(outside)) | {w for w in _words(inside) if w not in candidate_words}
        doc.context_tokens = sorted(tokens - set(_stop_words(config.extra_stop_words)))
        all_tokens.update(doc.context_tokens)
        entry = doc.problem.entry_point
        if entry:
            # Anonymize renames the function everywhere (signature, description, examples).
            nameless = re.sub(rf"\b{re.escape(entry)}\b", " ", outside)
            kept = set(_words(nameless)) | {w for w in _words(inside) if w not in candidate_words}
            doc.name_free_tokens = [t for t in doc.context_tokens if t in kept]
        else:
            doc.name_free_tokens = list(doc.context_tokens)
        name = doc.problem.block("name")
        parameters = _parameters(doc.problem) if not doc.problem.is_stdio else []
        if name is not None and parameters:
            bare = re.sub(rf"\b(?:{'|'.join(map(re.escape, parameters))})\b", " ", name.text)
            head, found, tail = outside.rpartition(name.text)  # the last `def` is the name block
            kept = set(_words(head + bare + tail if found else outside))
            kept |= {w for w in _words(inside) if w not in candidate_words}
            doc.parameter_free_tokens = [t for t in doc.context_tokens if t in kept]
        else:
            doc.parameter_free_tokens = list(doc.context_tokens)
    # Embed every distinct context token and candidate once for the whole dataset.
    all_keywords = sorted({w for cands in candidates for k, _ in cands for w in [k, *k.split()]})
    embedder.embed(sorted(all_tokens) + all_keywords)

    update = progress_bar(len(docs), "keywords", unit="problem")
    for done, (doc, cands) in enumerate(zip(docs, candidates, strict=True), start=1):
        decisions = [
            _decide(doc, keyword, score, config, embedder, anchors) for keyword, score in cands
        ]
        decisions = _without_overlaps(_words_not_phrases(doc, decisions, config, embedder, anchors))
        # Overlaps first: a phrase and its own word at one place are one drop, already settled
        # by rank; what is left are the two apart (the same hint twice), and the words a
        # phrase gives way to must not overlap a pick either.
        decisions = _phrases_beside_their_words(doc, decisions, config, embedder, anchors)
        decisions = _one_pick_per_word(_without_overlaps(decisions))
        results[id(doc)] = KeywordAnalysis(doc.problem.task_id, tuple(decisions))
        update(done, len(docs))
    out = []
    for problem, item in zip(problems, prepared, strict=True):
        out.append(
            results[id(item)]
            if isinstance(item, _Doc)
            else KeywordAnalysis(problem.task_id, (), item)
        )
    return out


def _ngram_analyzer(config: KeywordConfig) -> Any:
    """Unigrams and bigrams of *adjacent* words within a clause, none of them a stop word.

    sklearn's own analyzer drops stop words before forming n-grams, so "closer to each other
    than given threshold" would yield the bigram "closer threshold", which is not in the text
    and cannot be dropped.
    """
    stop = set(_stop_words(config.extra_stop_words))
    lo, hi = config.ngram_range

    def analyze(text: str) -> list[str]:
        grams = []
        for clause in re.split(r"[^\w\s'-]|\n\s*\n", text):
            words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z]+", clause)]
            for n in range(lo, hi + 1):
                for i in range(len(words) - n + 1):
                    gram = words[i : i + n]
                    if not any(w in stop for w in gram):
                        grams.append(" ".join(gram))
        return grams

    return analyze


def _keybert_candidates(
    texts: list[str], config: KeywordConfig, embedder: Embedder
) -> list[list[tuple[str, float]]]:
    """KeyBERT's top-n n-grams per text, in one call with precomputed embeddings."""
    from keybert import KeyBERT
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(analyzer=_ngram_analyzer(config))
    try:
        vocabulary = list(vectorizer.fit(texts).get_feature_names_out())
    except ValueError:  # every text is stop words only
        return [[] for _ in texts]
    doc_embeddings = embedder.embed(texts)
    word_embeddings = embedder.embed(vocabulary)
    model = KeyBERT(model=_precomputed_backend())
    keywords = model.extract_keywords(
        texts,
        vectorizer=vectorizer,
        top_n=config.top_n,
        doc_embeddings=doc_embeddings,
        word_embeddings=word_embeddings,
    )
    if len(texts) == 1:  # KeyBERT unwraps a single document's list
        keywords = [keywords]
    return [[(k, float(s)) for k, s in kws] for kws in keywords]


def _with_type_keywords(text: str, candidates: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """KeyBERT's candidates plus every type keyword of the text it did not rank (`integers`
    in a long statement, `None`): the paper's type rule is about exactly these words, so they
    are always looked at (after KeyBERT's, in order of appearance, with score 0)."""
    seen = {w for keyword, _ in candidates for w in keyword.split()}
    extra = []
    for word in re.findall(r"[A-Za-z]+", text):
        word = word.lower()
        if word in TYPE_KEYWORDS and word not in seen:
            seen.add(word)
            extra.append((word, 0.0))
    return candidates + extra


def _with_name_words(doc: _Doc, candidates: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """KeyBERT's candidates plus every description word a piece of the signature recovers
    (`below` in `below_zero`, `even` in `even_odd_count`, `maximum` in `max_element`), stop
    words included: a hint the name gives is droppable wherever the description repeats it
    (docs/explanation/blocks-and-keywords.md, "The function's own name"). Closed-class words
    (`is` in `is_prime`) and the prompt's instructions (`find` in `find_max`) never are."""
    if not (doc.function_pieces or doc.parameter_pieces):
        return candidates
    seen = {w for keyword, _ in candidates for w in keyword.split()}
    extra = []
    for word in re.findall(r"[A-Za-z]+", doc.text):
        word = word.lower()
        if (
            word in seen
            or len(word) < MIN_ABBREVIATION
            or word in CLOSED_CLASS
            or word in PROMPT_INSTRUCTIONS
        ):
            continue
        seen.add(word)
        if _name_evidence(doc, word) is not None:
            extra.append((word, 0.0))
    return candidates + extra


def _precomputed_backend() -> Any:
    """A KeyBERT backend that never embeds: every embedding is passed in precomputed."""
    from keybert.backend import BaseEmbedder

    class Precomputed(BaseEmbedder):
        def embed(self, documents: Sequence[str], verbose: bool = False) -> np.ndarray:
            raise AssertionError("embeddings are precomputed")

    return Precomputed()


class _DecisionBase(TypedDict):
    """The KeywordDecision fields every rule fills in."""

    keyword: str
    keybert_score: float
    best_anchor: str
    anchor_similarity: float


class _DecisionFound(_DecisionBase):
    """Plus the context fields, once the keyword passed the code filter."""

    context_token: str | None
    context_similarity: float | None


def _decide(
    doc: _Doc,
    keyword: str,
    score: float,
    config: KeywordConfig,
    embedder: Embedder,
    anchors: np.ndarray,
) -> KeywordDecision:
    vector = embedder.embed([keyword])[0]
    anchor_sims = anchors @ vector
    best = int(np.argmax(anchor_sims))
    base: _DecisionBase = {
        "keyword": keyword,
        "keybert_score": round(score, 4),
        "best_anchor": config.anchors[best],
        "anchor_similarity": round(float(anchor_sims[best]), 4),
    }
    occurrences = _occurrences(doc.problem.prompt, doc.spans, keyword)
    if not occurrences:
        return KeywordDecision(**base, droppable=False, rule="not_a_whole_word")
    generic = [o for o in occurrences if _starts_generic_phrase(doc.problem.prompt, o, config)]
    occurrences = [o for o in occurrences if o not in generic]
    # A generic phrase the description says again ("the number of ... the total number of")
    # is recoverable by the first-occurrence rule like any repeated keyword; its later
    # occurrences go as the whole phrase ("number of"), so the sentence still reads ("the
    # total chars"), where dropping the word alone would leave "the total of chars".
    later_phrases = (
        [_with_phrase(doc.problem.prompt, o, config) for o in generic[1:]]
        if config.first_occurrence_rule and not occurrences
        else []
    )
    if not occurrences and not later_phrases:
        return KeywordDecision(**base, droppable=False, rule="generic_phrase")
    if any(_is_identifier(doc, w) for w in keyword.split()):
        return KeywordDecision(**base, droppable=False, rule="identifier")
    # A term a docstring repeats is one the task defines and works with ("polynomial",
    # "minimum", "multiple of 3" said twice or more): a docstring is a few sentences that say
    # what to compute, so such a term is about the computation whatever its similarity to the
    # code anchors (which place arithmetic words far from "Code"), and its first occurrence
    # recovers it. Only nouns and adjectives are terms (not a verb it restates, `represents`).
    # A contest statement is a story whose characters and objects recur by design (`hero`,
    # `coin`), so there the code filter alone decides.
    repeated_term = (
        config.first_occurrence_rule
        and not doc.problem.is_stdio
        and (len(occurrences) > 1 or bool(later_phrases))
        and all(_is_term(w) for w in keyword.lower().split())
    )
    if (
        anchor_sims[best] < config.code_threshold
        and not repeated_term
        and not _code_by_definition(doc, keyword, code_vocabulary(config.code_vocabulary))
    ):
        return KeywordDecision(**base, droppable=False, rule="code_filter")
    context_token, context_similarity = None, None
    if doc.context_tokens:
        if doc.context_vectors is None:
            doc.context_vectors = embedder.embed(doc.context_tokens)
        context = doc.context_vectors
        # A bigram is only as recoverable as its least recoverable word: "numbers closer" is not
        # recoverable because `numbers` is in the signature.
        parts = keyword.split() if len(keyword.split()) > 1 else [keyword]
        per_part: list[tuple[float, str]] = []  # (similarity, closest context token) per word
        for part in parts:
            sims = context @ (vector if part == keyword else embedder.embed([part])[0])
            top = int(np.argmax(sims))
            per_part.append((float(sims[top]), doc.context_tokens[top]))
        weakest = min(per_part)
        context_token, context_similarity = weakest[1], round(weakest[0], 4)
    found: _DecisionFound = {
        **base,
        "context_token": context_token,
        "context_similarity": context_similarity,
    }
    if later_phrases:
        return KeywordDecision(
            **found, droppable=True, rule="repeated", occurrences=tuple(later_phrases)
        )
    if config.first_occurrence_rule and len(occurrences) > 1:
        return KeywordDecision(
            **found, droppable=True, rule="repeated", occurrences=tuple(occurrences[1:])
        )
    needs_name = False
    words = keyword.lower().split()
    evidence = (
        [_name_evidence(doc, w) for w in words] if not doc.problem.is_stdio else [None] * len(words)
    )
    if config.context_aware and any(
        w in CONSTRAINT_WORDS and e is None and not _said_elsewhere(doc, w)
        for w, e in zip(words, evidence, strict=True)
    ):
        return KeywordDecision(**found, droppable=False, rule="constraint")
    if not config.context_aware:
        rule = "no_filter"
    elif context_similarity is not None and context_similarity > config.context_threshold:
        rule = "context"
        typed = config.type_rule and _type_evidence(doc.problem, keyword)
        if not typed and any(
            _parameter_only(doc, w) and not _recoverable_word(doc, w, config, embedder)
            for w in words
        ):
            return KeywordDecision(**found, droppable=False, rule="parameter_only")
        needs_name = (
            not typed
            and "parameter" not in evidence
            and not _recoverable(doc.name_free_tokens, keyword, vector, config, embedder)
        )
        if needs_name and None in evidence:
            # Only the function's name recovers it, and only through a related word the
            # embedder matches (`distributed` / `fruit_distribution`), not the word itself or
            # an inflection or abbreviation of it: the name is a few words its author chose,
            # and a derivative of one says something else, so nothing restores this word.
            return KeywordDecision(**found, droppable=False, rule="related_name")
    elif config.type_rule and _type_evidence(doc.problem, keyword):
        rule = "type"
    elif None not in evidence:
        # A piece of the signature recovers every word (an inflection or an abbreviation the
        # embedder does not match: `palindromes` in `even_odd_palindrome`, `maximum` in
        # `max_element`).
        if any(
            e == "parameter" and _parameter_only(doc, w)
            for w, e in zip(words, evidence, strict=True)
        ):
            return KeywordDecision(**found, droppable=False, rule="parameter_only")
        rule = "name"
        needs_name = "function" in evidence
    else:
        return KeywordDecision(**found, droppable=False, rule="no_context")
    return KeywordDecision(
        **found,
        droppable=True,
        rule=rule,
        occurrences=tuple(occurrences),
        needs_name=needs_name,
    )


def _said_elsewhere(doc: _Doc, word: str) -> bool:
    """Whether the challenge says `word` itself outside this candidate: a context token (the
    signature, the examples, the rest of the description) is the word or an inflection of it.
    A similar word is not enough for a constraint (`CONSTRAINT_WORDS`)."""
    stem = _stem(word)
    return any(_stem(token) == stem for token in doc.context_tokens)


def _parameter_only(doc: _Doc, word: str) -> bool:
    """Whether `word` is a word only a parameter's name may recover: not the name of a value's
    type or of its members (`numbers` for `numbers: List[float]`, `character` for `char`: what
    the argument is) and not a word the
    function's name recovers. A parameter's name is a label its author gave the argument, which
    the description defines ("each bucket has the same capacity", `capacity`); dropping the
    definition leaves the label with nothing to say what it holds, so it recovers the
    argument's type, not the problem's subject (`planet` for `planet1`, `grid`, `words`)."""
    if TYPE_KEYWORDS.get(word) in VALUE_TYPES:  # `char` is a character, `numbers` numbers
        return False
    return not any(_recovers(piece, word) for piece in doc.function_pieces)


def _recoverable_word(doc: _Doc, word: str, config: KeywordConfig, embedder: Embedder) -> bool:
    """Whether a token other than a parameter's name recovers `word` (context filter)."""
    vector = embedder.embed([word])[0]
    return _recoverable(doc.parameter_free_tokens, word, vector, config, embedder)


def _recoverable(
    tokens: Sequence[str],
    keyword: str,
    vector: np.ndarray,
    config: KeywordConfig,
    embedder: Embedder,
) -> bool:
    """Whether every word of `keyword` has a token among `tokens` above the context threshold."""
    if not tokens:
        return False
    context = embedder.embed(list(tokens))
    parts = keyword.split() if len(keyword.split()) > 1 else [keyword]
    return all(
        float(np.max(context @ (vector if part == keyword else embedder.embed([part])[0])))
        > config.context_threshold
        for part in parts
    )


def _core(occurrence: Occurrence) -> tuple[int, int]:
    """An occurrence's span without the separating space it takes along."""
    text = occurrence.text
    return (
        occurrence.start + len(text) - len(text.lstrip()),
        occurrence.end - len(text) + len(text.rstrip()),
    )


def _without_overlaps(decisions: list[KeywordDecision]) -> list[KeywordDecision]:
    """A candidate whose text overlaps a higher-ranked droppable one (a bigram and its word) is
    not droppable on its own: dropping both would remove the same words twice."""
    taken: list[tuple[int, int]] = []
    out = []
    for decision in decisions:
        # Adjacent words share the space between them ("complex " and " number"): only the
        # words (with their articles and quotes) must not overlap.
        cores = [_core(o) for o in decision.occurrences]
        if decision.droppable and any(
            start < hi and lo < end for start, end in cores for lo, hi in taken
        ):
            decision = KeywordDecision(
                **{
                    **asdict(decision),
                    "occurrences": (),
                    "droppable": False,
                    "rule": "overlaps_keyword",
                }
            )
        elif decision.droppable:
            taken += cores
        out.append(decision)
    return out


def _words_not_phrases(
    doc: _Doc,
    decisions: list[KeywordDecision],
    config: KeywordConfig,
    embedder: Embedder,
    anchors: np.ndarray,
) -> list[KeywordDecision]:
    """A phrase is droppable only as far as each of its words is: a bigram one of whose words
    is not droppable on its own (the parameter's name after the noun that describes it, `list
    xs`; an adjective before the noun that is the hint, `positive integers`) gives way to the
    word that is, ranked where the phrase was (rule `split_phrase` on the phrase)."""
    out = []
    for decision in decisions:
        words = decision.keyword.split()
        if len(words) < 2 or not (decision.droppable or decision.rule == "identifier"):
            out.append(decision)
            continue
        singles = [
            _decide(doc, word, decision.keybert_score, config, embedder, anchors) for word in words
        ]
        kept = [single for single in singles if single.droppable]
        if len(kept) == len(words):
            out.append(decision)
            continue
        out.append(replace(decision, droppable=False, rule="split_phrase", occurrences=()))
        out += kept
    return out


def _phrases_beside_their_words(
    doc: _Doc,
    decisions: list[KeywordDecision],
    config: KeywordConfig,
    embedder: Embedder,
    anchors: np.ndarray,
) -> list[KeywordDecision]:
    """A droppable phrase that shares a word (any form of it) with a droppable word, or with a
    higher-ranked droppable phrase, is the same hint twice ("planet names" beside "planets",
    "prime factor" beside "prime"): Drop One would remove it in two variants. The word is
    kept, not the phrase: the paper's candidates are unigrams or bigrams, and the hint the rest
    of the challenge recovers is the word. The phrase gives way to its words, each decided
    alone and ranked where the phrase was (rule `phrase_of_word` on the phrase): the shared one
    joins its pick, the other stays only where it is a hint on its own."""
    taken = [w for d in decisions if d.droppable and len(d.keyword.split()) == 1 for w in d.words]
    out = []
    for decision in decisions:
        words = decision.keyword.lower().split()
        if len(words) < 2 or not decision.droppable:
            out.append(decision)
            continue
        shared = {w for w in words if any(_same_word(w, t) for t in taken)}
        if not shared:
            out.append(decision)
            taken += words
            continue
        out.append(replace(decision, droppable=False, rule="phrase_of_word", occurrences=()))
        for word in words:
            # Each word decided alone; a shared one is then merged into its pick as one more
            # form or occurrence (`_one_pick_per_word`), so the phrase's place is not lost.
            single = _decide(doc, word, decision.keybert_score, config, embedder, anchors)
            if single.droppable:
                out.append(single)
                taken.append(word)
    return out


def _same_word(first: str, second: str) -> bool:
    """One word in two forms: an inflection (same stem) or a stemming fragment (a non-word of
    at least three letters that starts the other, `fib` / `fibonacci`)."""
    a, b = first.lower().split(), second.lower().split()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        short, long = sorted((x, y), key=len)
        if _stem(x) == _stem(y):
            continue
        if not (
            len(short) >= MIN_ABBREVIATION and long.startswith(short) and not _is_english(short)
        ):
            return False
    return True


def _one_pick_per_word(decisions: list[KeywordDecision]) -> list[KeywordDecision]:
    """A droppable keyword that is another form of a higher-ranked droppable one (`group` after
    `groups`) is merged into it: one keyword whose occurrences are both forms', so Drop One
    drops the hint once, not in two variants (rule `same_word` on the merged one)."""
    out = list(decisions)
    picked: list[int] = []
    for i, decision in enumerate(out):
        if not decision.droppable:
            continue
        target = next((j for j in picked if _same_word(out[j].keyword, decision.keyword)), None)
        if target is None:
            picked.append(i)
            continue
        first = out[target]
        out[target] = replace(
            first,
            occurrences=tuple(
                sorted({*first.occurrences, *decision.occurrences}, key=lambda o: o.start)
            ),
            forms=(*first.forms, decision.keyword),
            needs_name=first.needs_name or decision.needs_name,
        )
        out[i] = replace(decision, droppable=False, rule="same_word", occurrences=())
    return out
