"""ReCode's function-name perturbations (its "func_name" recipes) as registered transformations.

Each renames the function under test consistently, in the signature, the docstring's examples
(and the description where the name reads as code), the tests and the reference solution,
through `perturb.transforms.anonymize_problem`, which also refuses a new name the problem
already uses. ReCode renames by replacing the name as a substring of the prompt; renaming token
by token never touches a longer identifier that contains the name.

A name is read as words: split at underscores (`has_close_elements`) or, without underscores,
at capitals (`hasCloseElements`); digits and underscores stay where they are. The word-level
renamings (`func_inflectional_variation`, `func_synonym`) change words and keep that shape: a
word's capitalisation carries over, and a synonym of several words is joined in the name's own
style (`check_up_on`, `checkUpOn`). The character-level ones (`func_butter_finger`,
`func_swap_char`, `func_change_char`) change letters only, so the result stays an identifier.
"""

from __future__ import annotations

import keyword
import random
import re
from typing import Any

from benchmarks.problem import Problem
from perturb.keywords import KeywordAnalysis
from perturb.recode import words
from perturb.transforms import NotApplicable, Variants, anonymize_problem, transform

FAMILY = "function_name"
NAME_PIECES = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[^A-Za-z]+")
"""A name's pieces: words (`has`, `Close`, `HTML`) and what lies between them (`_`, digits)."""


def _rename(problem: Problem, new_name: str, **extra: Any) -> Variants:
    """The problem with its function renamed to `new_name` everywhere, or why not."""
    old = problem.entry_point
    if old is None:
        return NotApplicable("stdin/stdout problems have no function name")
    if new_name == old:
        raise AssertionError("callers return their own reason for an unchanged name")
    if keyword.iskeyword(new_name) or not new_name.isidentifier():
        return NotApplicable(f"the new name {new_name!r} is not a usable Python name")
    renamed = anonymize_problem(problem, new_name)
    if isinstance(renamed, NotApplicable):
        return renamed
    return [renamed._replace(changes={**renamed.changes, **extra})]


def _pieces(name: str) -> list[str]:
    pieces = NAME_PIECES.findall(name)
    if "".join(pieces) != name:  # an invariant of the pattern, not user input
        raise AssertionError(f"name {name!r} does not split into pieces")
    return pieces


def _join_words(parts: list[str], snake: bool, original: str) -> str:
    """Several words standing in for the name's word `original`, in the name's style."""
    if snake:
        return "_".join(words.match_case(original, p) if i == 0 else p for i, p in enumerate(parts))
    return words.match_case(original, parts[0]) + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def _name_of(problem: Problem) -> str | NotApplicable:
    if problem.entry_point is None:
        return NotApplicable("stdin/stdout problems have no function name")
    return problem.entry_point


@transform("func_camel_case", "1", family=FAMILY, recode="FuncRenameCamelCase")
def func_camel_case(problem: Problem, keywords: KeywordAnalysis | None) -> Variants:
    """Switch the name's style: snake_case to camelCase (`has_close_elements` ->
    `hasCloseElements`), camelCase to snake_case."""
    name = _name_of(problem)
    if isinstance(name, NotApplicable):
        return name
    if "_" in name:
        head, *rest = name.split("_")
        new = head + "".join(part[:1].upper() + part[1:] for part in rest)
    else:
        new = name[:1] + "".join(f"_{c.lower()}" if c.isupper() else c for c in name[1:])
    if new == name:
        return NotApplicable(f"the name {name} is one word; changing its style leaves it as is")
    return _rename(problem, new)


def _changed_letters(name: str, new: str) -> Variants | None:
    """None where `new` differs from `name`, else the NotApplicable saying so."""
    return None if new != name else NotApplicable("no letter of the name changed at this seed")


@transform("func_butter_finger", "1", family=FAMILY, recode="FuncRenameButterFinger")
def func_butter_finger(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.05, rng: random.Random
) -> Variants:
    """Typos in the name: each letter, with probability `prob`, becomes a neighbouring key on
    a QWERTY keyboard (case kept)."""
    name = _name_of(problem)
    if isinstance(name, NotApplicable):
        return name
    new = "".join(
        words.keyboard_typo(c, rng) if c.isalpha() and rng.random() < prob else c for c in name
    )
    return _changed_letters(name, new) or _rename(problem, new)


@transform("func_swap_char", "1", family=FAMILY, recode="FuncRenameSwapChar")
def func_swap_char(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.05, rng: random.Random
) -> Variants:
    """Swap neighbouring letters or digits of the name, each pair with probability `prob`
    (a digit never moves to the front)."""
    name = _name_of(problem)
    if isinstance(name, NotApplicable):
        return name
    chars = list(name)
    index = 0
    while index < len(chars) - 1:
        left, right = chars[index], chars[index + 1]
        swappable = left.isalnum() and right.isalnum() and left != right
        if swappable and not (index == 0 and right.isdigit()) and rng.random() < prob:
            chars[index], chars[index + 1] = right, left
            index += 2  # a swapped letter does not travel on
        else:
            index += 1
    new = "".join(chars)
    return _changed_letters(name, new) or _rename(problem, new)


@transform("func_change_char", "1", family=FAMILY, recode="FuncRenameChangeChar")
def func_change_char(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.35, rng: random.Random
) -> Variants:
    """Flip the case of each letter of the name with probability `prob` (ReCode raises its
    docstring default of 0.1 to 0.35 for names, which are short)."""
    name = _name_of(problem)
    if isinstance(name, NotApplicable):
        return name
    new = "".join(c.swapcase() if c.isalpha() and rng.random() < prob else c for c in name)
    return _changed_letters(name, new) or _rename(problem, new)


def _word_renaming(
    problem: Problem, transform_name: str, choose: Any, none_reason: str
) -> Variants:
    """Rename by replacing the name's words: `choose(word, pos)` gives a word's new text (a
    list of words, or None to keep it) for every word WordNet gives a part of speech."""
    name = _name_of(problem)
    if isinstance(name, NotApplicable):
        return name
    snake = "_" in name
    pieces, changed, candidates = _pieces(name), [], 0
    for index, piece in enumerate(pieces):
        pos = words.part_of_speech(piece, transform_name) if piece.isalpha() else None
        if pos is None:
            continue
        new_words = choose(piece, pos)
        if new_words is None:
            continue
        candidates += 1
        new = _join_words(new_words, snake, piece)
        if new != piece:
            pieces[index] = new
            changed.append([piece, new])
    if not candidates:
        return NotApplicable(none_reason)
    if not changed:
        return NotApplicable("no word of the name changed at this seed")
    return _rename(problem, "".join(pieces), changed_words=changed)


@transform(
    "func_inflectional_variation", "1", family=FAMILY, recode="FuncRenameInflectionalVariation"
)
def func_inflectional_variation(
    problem: Problem, keywords: KeywordAnalysis | None, *, rng: random.Random
) -> Variants:
    """Inflect each noun, verb and adjective of the name at random (`sort_numbers` ->
    `sorted_number`), one of its lemma's forms (lemminflect) drawn uniformly."""

    def choose(word: str, pos: str) -> list[str] | None:
        if pos == "r":
            return None
        forms = [f for f in words.inflections(word, pos) if f.isalpha()]
        return [rng.choice(forms)] if len(forms) > 1 else None

    return _word_renaming(
        problem,
        "func_inflectional_variation",
        choose,
        "no word of the name is a noun, verb or adjective with another inflection",
    )


@transform("func_synonym", "1", family=FAMILY, recode="FuncRenameSynonymSub")
def func_synonym(
    problem: Problem, keywords: KeywordAnalysis | None, *, prob: float = 0.5, rng: random.Random
) -> Variants:
    """Replace each word of the name that has WordNet synonyms, with probability `prob`, by one
    of them inflected like the word (`has_close_elements` -> `has_near_elements`)."""

    def choose(word: str, pos: str) -> list[str] | None:
        options = words.synonyms(word, pos, "func_synonym")
        if not options:
            return None
        if rng.random() >= prob:
            return [word]
        text = words.inflected_like(word, pos, rng.choice(options))
        return [part.lower() for part in re.split(r"[ -]+", text) if part]

    return _word_renaming(
        problem, "func_synonym", choose, "no word of the name has a WordNet synonym"
    )
