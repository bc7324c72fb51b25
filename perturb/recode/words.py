"""Word data for ReCode's natural-language perturbations: WordNet 3.0 and English inflections.

WordNet is found without downloading anything, in this order:

1. `$BOI_WORDNET_DIR`: a directory holding WordNet 3.0's dictionary files (`data.noun`,
   `index.noun`, ...);
2. nltk's own data (`nltk.data.find("corpora/wordnet")`), where a user ran
   `nltk.download("wordnet")`;
3. Debian's `wordnet-base` package (`/usr/share/wordnet`).

Debian's copy lacks the small `lexnames` file nltk's reader opens first, and `index.sense`,
which nltk 3.10 reads only to map other WordNet versions onto this one for its multilingual
data. The reader here (`_reader_class`) serves `lexnames` from WordNet 3.0's documented list of
45 lexicographer files and skips that mapping, so the Debian directory is read where it lies
(symbolic links to it from a shadow directory would not do: nltk 3.10's path guard refuses a
file whose real path leaves the reader's root). The directory is added to `nltk.data.path`,
which that guard takes as the list of authorised roots. Everything is loaded once, on first
use.

Inflections come from lemminflect, which ships its tables.

No part-of-speech tagger works offline (nltk's needs a download, spaCy a model), so a word's
part of speech is WordNet's best guess for the word alone (`part_of_speech`): the part of
speech of its most frequent sense, by the sense counts WordNet ships (`cntlist.rev`, from the
SemCor corpus); where the word's senses have no counts, the part of speech with the most
senses. Closed-class words (articles, pronouns, prepositions, conjunctions, auxiliaries) are
never looked up (`CLOSED_CLASS`): WordNet lists some of them under rare senses ("a" as the
vitamin, "in" as the inch).
"""

from __future__ import annotations

import functools
import io
import os
import random
from pathlib import Path
from typing import Any

import lemminflect

from benchmarks.common.errors import UserError
from perturb.words import CLOSED_CLASS

WORDNET_ENV = "BOI_WORDNET_DIR"
DEBIAN_WORDNET = Path("/usr/share/wordnet")

# WordNet 3.0's lexicographer files, in the order of their numbers (WordNet's lexnames(5)
# manual page): the content of the `lexnames` file Debian's wordnet-base leaves out.
LEXICOGRAPHER_FILES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2),
    ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2),
    ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)  # fmt: skip

# One list for ReCode's word-level perturbations and the keyword pipeline (perturb.words).


UPOS = {"n": "NOUN", "v": "VERB", "a": "ADJ", "r": "ADV"}
"""WordNet part of speech -> the universal tag lemminflect takes."""


def _reader_class() -> Any:
    """nltk's WordNet reader made to read a bare WordNet 3.0 directory (nltk is imported only
    when WordNet is first needed)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNetReader(WordNetCorpusReader):
        """nltk's reader over a bare WordNet 3.0 directory (see the module docstring)."""

        def open(self, fileid: str) -> Any:
            if fileid == "lexnames":
                text = "".join(
                    f"{number:02d}\t{name}\t{kind}\n"
                    for number, (name, kind) in enumerate(LEXICOGRAPHER_FILES)
                )
                return io.StringIO(text)
            return super().open(fileid)

        def map_wn(self, version: str = "wordnet") -> None:
            # Only nltk's multilingual (OMW) data needs the version mapping; it reads
            # index.sense of nltk's own WordNet, which may be absent.
            return None

    return WordNetReader


def wordnet_location() -> Any | None:
    """Where WordNet is (a directory, or nltk's path pointer), or None when nowhere."""
    given = os.environ.get(WORDNET_ENV)
    if given:
        if not (Path(given) / "data.noun").is_file():
            raise UserError(
                f"{WORDNET_ENV}={given} holds no WordNet dictionary (no data.noun there); point "
                "it at WordNet 3.0's dict directory, or unset it."
            )
        return Path(given)
    import nltk

    try:
        return nltk.data.find("corpora/wordnet")
    except LookupError:
        pass
    if (DEBIAN_WORDNET / "data.noun").is_file():
        return DEBIAN_WORDNET
    return None


@functools.cache
def _load_wordnet() -> Any | None:
    import warnings

    import nltk

    location = wordnet_location()
    if location is None:
        return None
    if isinstance(location, Path):
        # nltk 3.10 reads only under the roots in nltk.data.path.
        root = str(location.resolve())
        if root not in nltk.data.path:
            nltk.data.path.append(root)
        location = root
    with warnings.catch_warnings():
        # "The multilingual functions are not available": we use none of them.
        warnings.simplefilter("ignore", UserWarning)
        return _reader_class()(location, None)


def wordnet(needed_by: str) -> Any:
    """The WordNet reader, loaded once; a UserError naming `needed_by` (a transformation)
    when no WordNet is installed."""
    reader = _load_wordnet()
    if reader is None:
        raise UserError(
            f"transform {needed_by} needs WordNet 3.0: install it with `apt install "
            "wordnet-base`, or run `python -c \"import nltk; nltk.download('wordnet')\"`, or "
            f"set {WORDNET_ENV} to a WordNet dict directory."
        )
    return reader


def wordnet_available() -> bool:
    """Whether WordNet can be loaded (for tests and listings)."""
    try:
        return _load_wordnet() is not None
    except UserError:
        return False


def _normal_pos(pos: str) -> str:
    return "a" if pos == "s" else pos  # adjective satellites are adjectives


def _base_forms(reader: Any, lower: str, pos: str) -> set[str]:
    """`lower` and its lemmas as part of speech `pos`: WordNet's morphy stops at the first
    form it knows ("elements" is itself a noun, the weather), lemminflect gives the lemma."""
    forms = {lower, reader.morphy(lower, pos) or lower}
    forms.update(lemminflect.getAllLemmas(lower).get(UPOS[pos], ()))
    return forms


@functools.cache
def part_of_speech(word: str, needed_by: str) -> str | None:
    """The WordNet part of speech ('n', 'v', 'a' or 'r') of `word` read on its own: that of its
    most frequent sense by WordNet's sense counts; where no sense is counted, the part of
    speech with the most senses (ties: noun, verb, adjective, adverb). None for closed-class
    words and words WordNet does not know."""
    lower = word.lower()
    if lower in CLOSED_CLASS or not lower.isalpha():
        return None
    reader = wordnet(needed_by)
    counts: dict[str, int] = {}
    senses: dict[str, int] = {}
    for synset in reader.synsets(lower):
        pos = _normal_pos(synset.pos())
        forms = _base_forms(reader, lower, pos)
        senses[pos] = senses.get(pos, 0) + 1
        counts[pos] = counts.get(pos, 0) + sum(
            lemma.count() for lemma in synset.lemmas() if lemma.name().lower() in forms
        )
    if not senses:
        return None
    order = "nvar"
    return max(senses, key=lambda p: (counts[p], senses[p], -order.index(p)))


def lemma_of(word: str, pos: str) -> str | None:
    """The lemma of `word` as part of speech `pos` (lemminflect), or None."""
    lemmas = lemminflect.getAllLemmas(word.lower()).get(UPOS[pos], ())
    return lemmas[0] if lemmas else None


def tag_of(word: str, lemma: str, pos: str) -> str | None:
    """The Penn tag under which `word` is an inflection of `lemma` (e.g. NNS, VBZ), or None."""
    for tag, forms in lemminflect.getAllInflections(lemma, upos=UPOS[pos]).items():
        if word.lower() in forms:
            return str(tag)
    return None


def inflect(word: str, tag: str) -> str:
    """`word` (a lemma; for several words, the head: the last for nouns, the first for verbs)
    inflected as Penn `tag`: lemminflect's dictionary form where it has one; an adjective it
    knows no comparative of takes "more"/"most" ("more bombastic", not "bombasticer"); any
    other word its spelling rules."""
    parts = word.split(" ")
    head = 0 if tag.startswith("VB") else len(parts) - 1
    forms = lemminflect.getInflection(parts[head], tag=tag, inflect_oov=False)
    if not forms and tag in ("JJR", "JJS", "RBR", "RBS"):
        return ("more " if tag.endswith("R") else "most ") + word
    forms = forms or lemminflect.getInflection(parts[head], tag=tag)
    if forms:
        parts[head] = forms[0]
    return " ".join(parts)


def inflected_like(word: str, pos: str, lemma: str) -> str:
    """`lemma` (a synonym of `word`) in `word`'s inflection: "numbers" -> "figures"."""
    own_lemma = lemma_of(word, pos) if pos != "r" else None
    tag = tag_of(word, own_lemma, pos) if own_lemma else None
    return inflect(lemma, tag) if tag else lemma


def inflections(word: str, pos: str) -> list[str]:
    """Every inflection of `word`'s lemma as part of speech `pos` ('n', 'v' or 'a'), in a
    fixed order (the word's own form included)."""
    lemma = lemma_of(word, pos)
    if lemma is None:
        return []
    table = lemminflect.getAllInflections(lemma, upos=UPOS[pos])
    return list(dict.fromkeys(form for tag in sorted(table) for form in table[tag]))


@functools.cache
def synonyms(word: str, pos: str, needed_by: str) -> tuple[str, ...]:
    """WordNet synonyms of `word` as part of speech `pos`: the lemmas of its lemma's synsets of
    that part of speech ("numbers": those of "number"), in WordNet's order, without the word
    itself, proper nouns and lemmas with digits or punctuation other than a hyphen; several
    words are joined by spaces. They are lemmas: `inflect` them like the word."""
    reader = wordnet(needed_by)
    lower = word.lower()
    forms = _base_forms(reader, lower, pos)
    found: dict[str, None] = {}
    lookup = lemma_of(lower, pos) if pos in "nva" else None
    for synset in reader.synsets(lookup or lower):
        if _normal_pos(synset.pos()) != pos:
            continue
        for lemma in synset.lemmas():
            name = lemma.name().replace("_", " ")
            if name.lower() in forms or name != name.lower():
                continue
            if all(c.isalpha() or c in " -" for c in name):
                found[name] = None
    return tuple(found)


KEYBOARD_ROWS = (("qwertyuiop", 0.0), ("asdfghjkl", 0.25), ("zxcvbnm", 0.75))
"""A QWERTY keyboard's letter rows and how far each row is shifted right (in keys)."""


def _keyboard_neighbours() -> dict[str, str]:
    """Letter -> the letters next to it: beside it in its row, or touching it in the rows
    above and below (centres less than one key apart)."""
    place = {
        key: (row, column + shift)
        for row, (keys, shift) in enumerate(KEYBOARD_ROWS)
        for column, key in enumerate(keys)
    }
    return {
        key: "".join(
            other
            for other, (other_row, other_x) in place.items()
            if other != key and abs(other_row - row) <= 1 and abs(other_x - x) <= 1
        )
        for key, (row, x) in place.items()
    }


KEYBOARD_NEIGHBOURS = _keyboard_neighbours()


def keyboard_typo(letter: str, rng: random.Random) -> str:
    """A neighbouring key of `letter` on a QWERTY keyboard, drawn from `rng`, in its case."""
    typo = rng.choice(KEYBOARD_NEIGHBOURS[letter.lower()])
    return typo.upper() if letter.isupper() else typo


def match_case(original: str, new: str) -> str:
    """`new` cased like the word it replaces: all capitals, a capital first letter, or as it is
    (the docstring and function-name families both substitute words)."""
    if len(original) > 1 and original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new
