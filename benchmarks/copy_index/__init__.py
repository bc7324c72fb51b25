"""A near-duplicate index of a code corpus, built once on disk and reused (by `boi analyze copies`;
any stage that must find training-data copies, such as decontaminating fine-tuning data, can
import it: it depends on benchmarks.common alone).

What is indexed: every function body (the tokens after a `def ...:` header; methods and nested
functions included) and every whole document of at most `max_doc_tokens` tokens, since a
completion is either a function body (HumanEval style) or a whole program (stdin/stdout). A
short completion set against a whole long file has a tiny Jaccard similarity even when it was
copied from it verbatim, which is why the units are functions, not files. A unit whose tokens
are exactly those of an earlier one (vendored or generated code) is indexed once, and its
places are listed with every match of the first.

How: code is cut into tokens (names, keywords, numbers, strings, operators; comments and
whitespace dropped), a unit into shingles of `shingle` consecutive tokens, and each unit's
shingle set into a MinHash (`datasketch.MinHash`, `num_perm` permutations) that a
`datasketch.MinHashLSH` (Jaccard threshold `threshold`) indexes. The LSH's band tables live in
SQLite (`_BandTable`, a datasketch storage backend) instead of datasketch's in-memory dicts, so
an index opens at once and grows with the disk rather than the memory. The documents (text,
tokens, token offsets) and the MinHash signatures sit beside them, so a candidate is verified
exactly (shingle Jaccard, containment, longest common token run) without rereading the corpus.

The folder is written as a temporary sibling and renamed into place; its manifest holds the
parameters and the corpus fingerprint (each file's path, size and modification time; a data
file's size and time; a dataset's name and split), and the index is rebuilt only when either
changed.

The modules, one concept each: `_config` (`IndexConfig`), `_tokens` (tokens, shingles, units),
`_corpus` (--corpus sources and their documents), `_prepare` (one document read, tokenized and
sketched, in worker processes), `_storage` (the index folder's files and the LSH's SQLite band
tables), `_build` (building, checking and reusing an index), `_search` (`CopyIndex.search`).
"""

from benchmarks.copy_index._build import SKIP_REASONS, default_index_dir, ensure_index
from benchmarks.copy_index._config import IndexConfig
from benchmarks.copy_index._corpus import (
    SITE_PACKAGES,
    STDLIB,
    Corpus,
    CorpusSource,
    resolve_corpus,
)
from benchmarks.copy_index._search import CopyIndex, SearchResult
from benchmarks.copy_index._tokens import document_units, tokenize_code

__all__ = [
    "SITE_PACKAGES",
    "SKIP_REASONS",
    "STDLIB",
    "CopyIndex",
    "Corpus",
    "CorpusSource",
    "IndexConfig",
    "SearchResult",
    "default_index_dir",
    "document_units",
    "ensure_index",
    "resolve_corpus",
    "tokenize_code",
]
