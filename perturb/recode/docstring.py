"""ReCode's docstring perturbations (its "nlaugmenter" recipes) as registered transformations.

Only the prose of the description block is perturbed: from after the docstring's opening
quotes to the end of the description (the examples block, the signature and everything else
stay byte for byte). ReCode cuts the same span (from the opening quotes to the first `>>>`,
`nlaugmenter/process_docstring.py`, `sep_doc`).

Within the prose, nothing that reads as code is touched (`protected_mask`):

- the identifiers of the problem's code: every name in the prompt's code, the reference
  solution and the tests (ReCode's `word_blacklist` collects variable, function and type
  names the same way), the entry point and parameters among them, matched as whole words;
- `True`, `False`, `None`; numbers and words with `_`, digits or inner capitals (`maxLen`);
  anything with code punctuation (`cost[][]`, `a^b`, `x**2`), calls (`f(x, y)`), brackets;
- backticked text and quoted strings;
- whole lines that read as code (with `>>>`, `==`, ` = `, `->`, `<=`, ...).

Word-level perturbations never touch closed-class words (`words.CLOSED_CLASS`) and read a
word's part of speech from WordNet (`words.part_of_speech`), since no tagger works offline.
Defaults are ReCode's: typo 0.05, character swap 0.05, case change 0.35, whitespace removal
0.1 and insertion 0.05, synonym substitution and insertion 0.5. Stochastic ones draw from their
`rng`; a description they leave unchanged is NotApplicable with the reason.
"""

from __future__ import annotations

import functools
import io
import keyword
import random
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from benchmarks.generation import BackendSpec, DecodingConfig, load_backend, model_flag_specs
from benchmarks.problem import Block, Problem
from perturb.keywords import KeywordAnalysis
from perturb.recode import words
from perturb.transforms import IDENTIFIER, NotApplicable, Variant, Variants, transform

FAMILY = "docstring"
NO_DESCRIPTION = NotApplicable("the problem has no description")

OPENING = re.compile(r"\s*(?:[rRuUbBfF]{0,2}(?:\"\"\"|'''|\"|'))?\s*")
"""What opens a description block before its prose: indentation, the docstring's quotes."""
CODE_LINE = re.compile(r">>>|==|!=|<=|>=|->|=>|\s=\s|\+=|-=")
CODE_CHARS = re.compile(r"[_0-9\[\]{}=<>+*/%^&|~\\#@$]|[a-z][A-Z]|\w\(|\w\.\w")
PROTECTED_PATTERNS = (
    re.compile(r"`[^`\n]*`"),  # backticked code
    re.compile(r"\"[^\"\n]*\""),  # double-quoted strings
    re.compile(r"(?<![A-Za-z0-9])'[^'\n]*'(?![A-Za-z0-9])"),  # quoted, not "don't"
    re.compile(r"\w+\([^()\n]*\)"),  # calls: f(x, y); "part (largest ...)" is prose
    re.compile(r"\[[^\[\]\n]*\]|\{[^{}\n]*\}"),  # brackets and braces with what they hold
)
WORD = re.compile(r"(?<![\w'])[A-Za-z]+(?![\w'])")
"""A word a word-level perturbation may change: letters only, not part of "don't"."""
TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
SENTENCE_BREAK = re.compile(r"[.!?:;]|\n\s*\n")


@dataclass(frozen=True)
class Prose:
    """The description's prose: where it lies in the prompt and which characters are code."""

    block_index: int
    """The description block's position in `problem.blocks`."""
    start: int
    """Where the prose starts in the description block's text."""
    text: str
    protected: tuple[bool, ...]
    """Per character of `text`: it belongs to something that reads as code."""

    def editable(self, start: int, end: int) -> bool:
        return not any(self.protected[start:end])


class Edit(NamedTuple):
    """Replace `text[start:end]` of the prose with `new`."""

    start: int
    end: int
    new: str


# --- the prose and what it protects -------------------------------------------------------


HARNESS_NAMES = frozenset({"check", "candidate", "METADATA"})
"""Names every HumanEval/MBPP test defines for the harness, not for the problem: in a test they
do not make "check" in "check whether ..." code."""


def _names_in(source: str) -> set[str]:
    names: set[str] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME and not keyword.iskeyword(token.string):
                names.add(token.string)
    except (tokenize.TokenError, SyntaxError):
        pass  # the names read before the error are kept; the signature's are added apart
    return names


def code_names(problem: Problem) -> frozenset[str]:
    """Every identifier the problem's code uses: the prompt's code (its docstring is one
    string token), the reference solution, the signature and the tests (less the harness's
    own `HARNESS_NAMES`, unless the problem's code uses them too)."""
    names = _names_in(problem.prompt + (problem.canonical_solution or ""))
    names |= _names_in(problem.test) - (HARNESS_NAMES - names)
    signature = problem.block("name")
    if signature is not None:
        names.update(n for n in IDENTIFIER.findall(signature.text) if not keyword.iskeyword(n))
    if problem.entry_point:
        names.add(problem.entry_point)
    return frozenset(names)


def protected_mask(text: str, names: frozenset[str]) -> tuple[bool, ...]:
    """Which characters of the prose `text` read as code (see the module docstring)."""
    mask = [False] * len(text)

    def protect(start: int, end: int) -> None:
        mask[start:end] = [True] * (end - start)

    offset = 0
    for line in text.splitlines(keepends=True):
        if CODE_LINE.search(line):
            protect(offset, offset + len(line.rstrip("\n")))
        offset += len(line)
    for pattern in PROTECTED_PATTERNS:
        for match in pattern.finditer(text):
            protect(match.start(), match.end())
    for match in re.finditer(r"\S+", text):
        core = match.group().strip(".,;:!?\"'()")
        if core and CODE_CHARS.search(core):
            start = match.start() + match.group().index(core)
            protect(start, start + len(core))
    code_words = names | {"True", "False", "None"}
    for match in IDENTIFIER.finditer(text):
        if match.group() in code_words:
            protect(match.start(), match.end())
    return tuple(mask)


def find_prose(problem: Problem) -> Prose | NotApplicable:
    """The description's prose, or NotApplicable when the problem has none."""
    blocks = problem.blocks or ()
    index = next((i for i, b in enumerate(blocks) if b.kind == "description"), None)
    if index is None or "description" in problem.absent_blocks:
        return NO_DESCRIPTION
    block = blocks[index].text
    opening = OPENING.match(block)
    start = opening.end() if opening else 0
    text = block[start:].rstrip()
    if not text:
        return NO_DESCRIPTION
    return Prose(index, start, text, protected_mask(text, code_names(problem)))


def _with_prose(
    problem: Problem, make: Callable[[Prose], list[Edit] | NotApplicable], **extra: Any
) -> Variants:
    """Apply the edits `make` computes on the problem's prose."""
    prose = find_prose(problem)
    if isinstance(prose, NotApplicable):
        return prose
    edits = make(prose)
    if isinstance(edits, NotApplicable):
        return edits
    return [_apply(problem, prose, edits, **extra)]


def _apply(problem: Problem, prose: Prose, edits: Sequence[Edit], **extra: Any) -> Variant:
    """The problem with `edits` made to its prose; `changes` lists them at prompt offsets."""
    blocks = list(problem.blocks or ())
    block = blocks[prose.block_index]
    base = sum(len(b.text) for b in blocks[: prose.block_index]) + prose.start
    pieces, cursor, recorded = [], 0, []
    for edit in sorted(edits):
        if edit.start < cursor:
            raise AssertionError(f"overlapping edits at {edit.start}")  # a bug, not input
        if any(prose.protected[edit.start : edit.end]):
            raise AssertionError(f"an edit touches protected text at {edit.start}")
        old = prose.text[edit.start : edit.end]
        pieces += [prose.text[cursor : edit.start], edit.new]
        cursor = edit.end
        recorded.append({"at": [base + edit.start, base + edit.end], "old": old, "new": edit.new})
    pieces.append(prose.text[cursor:])
    end = prose.start + len(prose.text)
    text = block.text[: prose.start] + "".join(pieces) + block.text[end:]
    blocks[prose.block_index] = Block("description", text)
    prompt = "".join(b.text for b in blocks)
    return Variant(
        problem.replace(prompt=prompt, blocks=tuple(blocks)), {"edits": recorded, **extra}
    )


def _char_edits(prose: Prose, replaced: Sequence[str]) -> list[Edit]:
    """Edits from per-character replacements, each widened to the unprotected part of the
    words it touches (a removed space joins its two neighbours), so the lineage reads
    "the list" -> "thelist"."""
    text, protected = prose.text, prose.protected
    spans: list[list[int]] = []
    for index, new in enumerate(replaced):
        if new == text[index]:
            continue
        lo, hi = index, index + 1
        while lo > 0 and not text[lo - 1].isspace() and not protected[lo - 1]:
            lo -= 1
        while hi < len(text) and not text[hi].isspace() and not protected[hi]:
            hi += 1
        if spans and lo <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    return [Edit(lo, hi, "".join(replaced[lo:hi])) for lo, hi in spans]


def _letters(prose: Prose) -> list[int]:
    return [i for i, c in enumerate(prose.text) if c.isalpha() and not prose.protected[i]]


def _editable_words(prose: Prose) -> list[re.Match[str]]:
    return [m for m in WORD.finditer(prose.text) if prose.editable(m.start(), m.end())]


UNCHANGED_AT_SEED = NotApplicable("nothing in the description changed at this seed")


# --- character level ----------------------------------------------------------------------


@transform("doc_butter_fingers", "1", family=FAMILY, recode="ButterFingersPerturbation")
def doc_butter_fingers(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.05, rng: random.Random
) -> Variants:
    """Typos in the description: each letter, with probability `prob`, becomes a neighbouring
    key on a QWERTY keyboard (case kept)."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        replaced = list(prose.text)
        for index in _letters(prose):
            if rng.random() < prob:
                replaced[index] = words.keyboard_typo(replaced[index], rng)
        return _char_edits(prose, replaced) or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


@transform("doc_swap_characters", "1", family=FAMILY, recode="SwapCharactersPerturbation")
def doc_swap_characters(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.05, rng: random.Random
) -> Variants:
    """Swap neighbouring letters of the description's words, each pair with probability
    `prob` ('apple' -> 'aplpe')."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        replaced = list(prose.text)
        letters = set(_letters(prose))
        index = 0
        while index < len(replaced) - 1:
            pair = replaced[index] != replaced[index + 1]
            if pair and {index, index + 1} <= letters and rng.random() < prob:
                replaced[index], replaced[index + 1] = replaced[index + 1], replaced[index]
                index += 2  # a swapped letter does not travel on
            else:
                index += 1
        return _char_edits(prose, replaced) or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


@transform("doc_change_case", "1", family=FAMILY, recode="ChangeCharCase")
def doc_change_case(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.35, rng: random.Random
) -> Variants:
    """Flip the case of each letter of the description with probability `prob`."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        replaced = list(prose.text)
        for index in _letters(prose):
            if rng.random() < prob:
                replaced[index] = replaced[index].swapcase()
        return _char_edits(prose, replaced) or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


@transform("doc_whitespace", "1", family=FAMILY, recode="WhitespacePerturbation")
def doc_whitespace(
    problem: Problem,
    keywords: KeywordAnalysis | None,
    *,
    remove_prob: float = 0.1,
    add_prob: float = 0.05,
    rng: random.Random,
) -> Variants:
    """Remove each space between two words with probability `remove_prob`, and add a space
    after each other character with probability `add_prob`. Line breaks and indentation stay
    (ReCode also joins lines), and no space is added to or removed from code."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        text, protected = prose.text, prose.protected
        replaced = list(text)
        for index, char in enumerate(text):
            draw = rng.random()
            inside = 0 < index < len(text) - 1
            if char == " " and inside:
                neighbours = text[index - 1] + text[index + 1]
                free = not any(protected[index - 1 : index + 2])
                if free and not any(c.isspace() for c in neighbours) and draw < remove_prob:
                    replaced[index] = ""
            elif not char.isspace() and not protected[index] and index < len(text) - 1:
                if text[index + 1] != "\n" and draw < add_prob:
                    replaced[index] = char + " "
        return _char_edits(prose, replaced) or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


# --- word level ---------------------------------------------------------------------------


def _synonym_words(
    prose: Prose, needed_by: str
) -> list[tuple[re.Match[str], str, tuple[str, ...]]]:
    """(word, part of speech, synonyms) for every editable word with WordNet synonyms."""
    found = []
    for match in _editable_words(prose):
        pos = words.part_of_speech(match.group(), needed_by)
        if pos is not None:
            options = words.synonyms(match.group(), pos, needed_by)
            if options:
                found.append((match, pos, options))
    return found


NO_SYNONYM = NotApplicable("no word of the description has a WordNet synonym")


def _synonym_edits(
    problem: Problem,
    name: str,
    prob: float,
    rng: random.Random,
    written: Callable[[str, str], str],
) -> Variants:
    """Each word with WordNet synonyms, with probability `prob`, gets one of them drawn
    uniformly and inflected like it; `written(word, synonym)` is what stands in its place."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        candidates = _synonym_words(prose, name)
        if not candidates:
            return NO_SYNONYM
        edits = []
        for match, pos, options in candidates:
            if rng.random() < prob:
                new = words.inflected_like(match.group(), pos, rng.choice(options))
                edits.append(Edit(match.start(), match.end(), written(match.group(), new)))
        return edits or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


@transform("doc_synonym_substitution", "1", family=FAMILY, recode="SynonymSubstitution")
def doc_synonym_substitution(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.5, rng: random.Random
) -> Variants:
    """Replace each word that has WordNet synonyms, with probability `prob`, by one of them
    drawn uniformly, inflected like the word ("numbers" -> "figures")."""
    return _synonym_edits(problem, "doc_synonym_substitution", prob, rng, words.match_case)


@transform("doc_synonym_insertion", "1", family=FAMILY, recode="SynonymInsertion")
def doc_synonym_insertion(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.5, rng: random.Random
) -> Variants:
    """After each word that has WordNet synonyms, with probability `prob`, insert one of them
    drawn uniformly, inflected like the word ("list" -> "list listing")."""
    return _synonym_edits(
        problem, "doc_synonym_insertion", prob, rng, lambda word, new: f"{word} {new}"
    )


@transform("doc_inflectional_variation", "1", family=FAMILY, recode="EnglishInflectionalVariation")
def doc_inflectional_variation(
    problem: Problem, keywords: KeywordAnalysis | None, *, rng: random.Random
) -> Variants:
    """Re-inflect every noun, verb and adjective of the description at random: one of its
    lemma's forms (lemminflect), drawn uniformly, may be its own (ReCode's rule)."""

    def make(prose: Prose) -> list[Edit] | NotApplicable:
        edits, content = [], 0
        for match in _editable_words(prose):
            pos = words.part_of_speech(match.group(), "doc_inflectional_variation")
            if pos not in ("n", "v", "a"):
                continue
            forms = [f for f in words.inflections(match.group(), pos) if f.isalpha()]
            if len(forms) < 2:
                continue
            content += 1
            new = words.match_case(match.group(), rng.choice(forms))
            if new != match.group():
                edits.append(Edit(match.start(), match.end(), new))
        if not content:
            return NotApplicable(
                "no word of the description is a noun, verb or adjective with another inflection"
            )
        return edits or UNCHANGED_AT_SEED

    return _with_prose(problem, make)


# --- tense --------------------------------------------------------------------------------

MODALS = frozenset("will would can could shall should may might must to not".split())
SUBJECT_PRONOUNS = frozenset("i you we they".split())
PAST_FORMS = {
    "is": "was", "am": "was", "are": "were", "has": "had", "have": "had", "does": "did",
    "do": "did", "can": "could", "cannot": "could not", "isn't": "wasn't", "aren't": "weren't",
    "doesn't": "didn't", "don't": "didn't", "hasn't": "hadn't", "haven't": "hadn't",
    "can't": "couldn't", "it's": "it was", "that's": "that was", "there's": "there was",
    "you're": "you were", "we're": "we were", "they're": "they were",
}  # fmt: skip
FUTURE_FORMS = {
    "is": "will be", "am": "will be", "are": "will be", "has": "will have",
    "have": "will have", "isn't": "won't be", "aren't": "won't be", "doesn't": "won't",
    "don't": "won't", "hasn't": "won't have", "haven't": "won't have", "it's": "it will be",
    "that's": "that will be", "there's": "there will be", "you're": "you will be",
    "we're": "we will be", "they're": "they will be",
}  # fmt: skip
NEEDS_SUBJECT = frozenset({"have", "do", "does", "has"})
"""Forms that open imperatives and questions ("Do not ...", "Have ..."): changed only after a
word of their sentence."""


def _tense_edits(prose: Prose, future: bool, needed_by: str) -> list[Edit]:
    """Edits moving the description's finite present-tense verbs to the past or future.

    Heuristic (no parser works offline): a finite present verb is
    - an auxiliary or contraction in `PAST_FORMS` (is, are, has, does, can, isn't, it's, ...)
      not after "to", "not" or a modal; "do", "does", "has" and "have" also not opening their
      sentence (imperatives, questions). The future of "does not" / "do not" is "will not";
      modals other than "can" are left alone, and "can" has no future here;
    - a verb in its third-person form (lemminflect's VBZ: "returns", "contains") whose most
      frequent WordNet sense is a verb, or a verb's plain form after "I", "you", "we",
      "they", not after "to", "not" or a modal.
    Imperatives ("Return the ...", "Write a function ...") and infinitives are not tensed and
    stay; participles ("is given") keep their form and the auxiliary changes.
    """
    tokens = [m for m in TOKEN.finditer(prose.text)]
    edits = []
    for index, match in enumerate(tokens):
        word = match.group()
        lower = word.lower()
        previous = tokens[index - 1] if index else None
        between = prose.text[previous.end() : match.start()] if previous else ""
        opens_sentence = previous is None or bool(SENTENCE_BREAK.search(between))
        before = None if opens_sentence or previous is None else previous.group().lower()
        after = tokens[index + 1].group().lower() if index + 1 < len(tokens) else None
        if not prose.editable(match.start(), match.end()) or before in MODALS:
            continue
        new: str | None = None
        if lower in PAST_FORMS:
            if lower in NEEDS_SUBJECT and before is None:
                continue
            if not future:
                new = PAST_FORMS[lower]
            elif lower in ("do", "does"):
                new = "will" if after == "not" else "will do"
            else:
                new = FUTURE_FORMS.get(lower)
        elif lower not in words.CLOSED_CLASS and "'" not in lower:
            lemma = words.lemma_of(lower, "v")
            tag = words.tag_of(lower, lemma, "v") if lemma else None
            third_person = tag == "VBZ" and lower != lemma
            plural = tag in ("VB", "VBP") and before in SUBJECT_PRONOUNS
            if lemma and (third_person or plural):
                if words.part_of_speech(lower, needed_by) == "v":
                    new = f"will {lemma}" if future else words.inflect(lemma, "VBD")
        if new is not None and new != lower:
            edits.append(Edit(match.start(), match.end(), words.match_case(word, new)))
    return edits


NO_PRESENT_VERB = NotApplicable("the description has no finite present-tense verb to change")


@transform("doc_tense_past", "1", family=FAMILY, recode="TenseTransformationPast")
def doc_tense_past(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Put the description's finite present-tense verbs in the past ("is" -> "was",
    "returns" -> "returned"); imperatives stay (see `_tense_edits`)."""
    return _with_prose(
        problem, lambda p: _tense_edits(p, False, "doc_tense_past") or NO_PRESENT_VERB
    )


@transform("doc_tense_future", "1", family=FAMILY, recode="TenseTransformationFuture")
def doc_tense_future(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Put the description's finite present-tense verbs in the future ("is" -> "will be",
    "returns" -> "will return"); imperatives stay (see `_tense_edits`)."""
    return _with_prose(
        problem, lambda p: _tense_edits(p, True, "doc_tense_future") or NO_PRESENT_VERB
    )


# --- paraphrase ---------------------------------------------------------------------------

PARAPHRASE_PROMPT = """\
Rewrite each text in other words. Keep every name, number, quoted text and code exactly as \
it is.

Text: Return the largest element of the list numbers.
Rewrite: Give back the biggest item in the list numbers.

Text: Check whether the string s reads the same forwards and backwards.
Rewrite: Determine if the string s is identical when read from either end.

Text: Write a function to count the vowels in a given word.
Rewrite: Create a function that counts how many vowels a given word has.

Text: {text}
Rewrite:"""
"""A few-shot prompt (the examples are ours) that works with base and chat models alike."""


@functools.cache
def paraphrase_backend(model: str) -> Any:
    """The generation backend `model` names (as `--model` does: an HF id or folder,
    'embedded', or a backend kind that takes no model), loaded once per model."""
    (spec,) = model_flag_specs([model])
    return load_backend(BackendSpec.from_mapping(spec))


def _protected_pieces(prose: Prose) -> list[str]:
    """The texts of the prose's protected runs (identifiers, literals, code), as written."""
    pieces, start = [], None
    for index, flag in enumerate((*prose.protected, False)):
        if flag and start is None:
            start = index
        elif not flag and start is not None:
            piece = prose.text[start:index].strip()
            if piece:
                pieces.append(piece)
            start = None
    return pieces


def occurrences(piece: str, text: str) -> int:
    """How often `piece` stands in `text` on its own: not inside a longer word ("a" in "an" is
    not the variable `a`)."""
    return len(re.findall(rf"(?<!\w){re.escape(piece)}(?!\w)", text))


@transform("doc_paraphrase", "1", family=FAMILY, recode="BackTranslation")
def doc_paraphrase(
    problem: Problem,
    keywords: KeywordAnalysis | None,
    *,
    model: str = "embedded",
    max_new_tokens: int = 128,
    max_chars: int = 360,
) -> Variants:
    """Paraphrase the description with a generation backend (greedy; `model` as for
    `--model`), where ReCode back-translates through German. The paraphrase replaces the prose
    on one line; one that is empty, unchanged, or drops or alters any identifier, literal or
    code of the description is refused. Descriptions of `max_chars` or more are skipped, as
    ReCode skips them."""
    prose = find_prose(problem)
    if isinstance(prose, NotApplicable):
        return prose
    flat = " ".join(prose.text.split())
    if len(flat) >= max_chars:
        return NotApplicable(
            f"the description has {len(flat)} characters, more than {max_chars - 1}"
        )
    decoding = DecodingConfig(temperature=0.0, max_new_tokens=max_new_tokens, stop=("\n",))
    (raw,) = paraphrase_backend(model).complete(PARAPHRASE_PROMPT.format(text=flat), decoding, [0])
    paraphrase = " ".join(raw.split("\n", 1)[0].split())
    if not paraphrase:
        return NotApplicable("the paraphrase is empty")
    if paraphrase == flat:
        return NotApplicable("the paraphrase repeats the description")
    block = (problem.blocks or ())[prose.block_index].text
    quotes = block[: prose.start].strip().lstrip("rRuUbBfF")
    if "\\" in paraphrase or (quotes and quotes in paraphrase):
        return NotApplicable("the paraphrase holds a backslash or the docstring's quotes")
    for piece in _protected_pieces(prose):
        if occurrences(piece, paraphrase) < occurrences(piece, flat):
            return NotApplicable(f"the paraphrase drops or alters {piece!r}")
    edit = Edit(0, len(prose.text), paraphrase)
    return [_apply(problem, _free(prose), [edit], paraphrase_model=model)]


def _free(prose: Prose) -> Prose:
    """`prose` with nothing protected: a paraphrase replaces it whole (after the check that it
    keeps every protected piece)."""
    return Prose(prose.block_index, prose.start, prose.text, (False,) * len(prose.text))
