"""ReCode's docstring family (perturb.recode.docstring): only the description's prose changes,
never identifiers, literals, code, the examples or the signature; seeds, parameters and
reasons; WordNet found offline; the paraphrase through a (fake, then embedded) backend; every
variant of HumanEval and MBPP still passing."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import BACKENDS, BackendBase, DecodingConfig, Request
from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.catalogue import PerturbConfig, run_catalogue
from perturb.recode import docstring, words
from perturb.recode.docstring import occurrences
from perturb.transforms import NotApplicable, get_transform, transforms_of_family
from tests.helpers import failing_references

WORDNET_MISSING = not words.wordnet_available() and os.environ.get("BOI_REQUIRE_WORDNET") != "1"
needs_wordnet = pytest.mark.skipif(
    WORDNET_MISSING,
    reason="WordNet is not installed (apt install wordnet-base); BOI_REQUIRE_WORDNET=1 fails instead",
)
CHARACTER_LEVEL = ("doc_butter_fingers", "doc_swap_characters", "doc_change_case", "doc_whitespace")
WORD_LEVEL = ("doc_synonym_substitution", "doc_synonym_insertion", "doc_inflectional_variation")
TENSE = ("doc_tense_past", "doc_tense_future")
# Probabilities high enough that every stochastic one changes much of a short description.
EAGER = {
    "doc_butter_fingers": {"prob": 0.5},
    "doc_swap_characters": {"prob": 0.5},
    "doc_change_case": {"prob": 0.5},
    "doc_whitespace": {"remove_prob": 0.5, "add_prob": 0.3},
    "doc_synonym_substitution": {"prob": 1.0},
    "doc_synonym_insertion": {"prob": 1.0},
    "doc_inflectional_variation": {},
    "doc_tense_past": {},
    "doc_tense_future": {},
}
PROTECTED = (
    "text",
    "max_count",
    "'a'",
    '"u"',
    "`str.lower`",
    "None",
    "True",
    "1",
    "helper_fn(text)",
    "x2",
    "isVowel",
    "    If x == 3 then the counting stops here.\n",
)


def problem(description: str | None = None) -> Problem:
    description = description or (
        "Count the vowels in text, stopping once max_count of them are found. Vowels are\n"
        "    'a', 'e', 'i', 'o' and \"u\"; use `str.lower` first. The function returns None when\n"
        "    text is empty, and True values count as 1. Call helper_fn(text) before the x2 and\n"
        "    isVowel checks.\n"
        "    If x == 3 then the counting stops here.\n"
    )
    prompt = (
        "def helper_fn(text):\n    return text\n\n\n"
        "def count_vowels(text: str, max_count: int) -> int:\n"
        f'    """{description}'
        '    >>> count_vowels("banana quickly", 2)\n    2\n    """\n'
    )
    return split_blocks(
        Problem(
            "T/1",
            "test",
            prompt,
            "count_vowels",
            test="def check(candidate):\n    assert candidate('banana', 2) == 2\n",
            canonical_solution="    return min(max_count, sum(c in 'aeiou' for c in helper_fn(text)))\n",
        )
    )


def outside_description(p: Problem) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in p.blocks or () if b.kind != "description"]


def assert_only_prose_changed(original: Problem, variant: Problem) -> None:
    """Every block but the description is byte for byte the same; so are the tests, solution
    and entry point; every protected piece of the prose is still there."""
    assert outside_description(variant) == outside_description(original)
    assert (variant.test, variant.canonical_solution, variant.entry_point) == (
        original.test,
        original.canonical_solution,
        original.entry_point,
    )
    prose = docstring.find_prose(original)
    assert not isinstance(prose, NotApplicable)
    new = variant.block("description")
    assert new is not None
    head = (original.block("description") or new).text[: prose.start]
    assert new.text.startswith(head)  # the opening quotes and their indentation
    for piece in docstring._protected_pieces(prose):
        assert occurrences(piece, new.text) >= occurrences(piece, prose.text), (piece, new.text)


def test_the_family_is_registered_with_recode_names():
    names = transforms_of_family("docstring")
    assert names == [*CHARACTER_LEVEL, *WORD_LEVEL, *TENSE, "doc_paraphrase"]
    assert {get_transform(n).stochastic for n in (*CHARACTER_LEVEL, *WORD_LEVEL)} == {True}
    assert {get_transform(n).stochastic for n in (*TENSE, "doc_paraphrase")} == {False}


def test_defaults_are_recodes():
    assert get_transform("doc_butter_fingers").params == {"prob": 0.05}
    assert get_transform("doc_swap_characters").params == {"prob": 0.05}
    assert get_transform("doc_change_case").params == {"prob": 0.35}
    assert get_transform("doc_whitespace").params == {"remove_prob": 0.1, "add_prob": 0.05}
    assert get_transform("doc_synonym_substitution").params == {"prob": 0.5}
    assert get_transform("doc_synonym_insertion").params == {"prob": 0.5}


def test_the_protected_mask_covers_code_and_leaves_prose():
    original = problem()
    prose = docstring.find_prose(original)
    assert not isinstance(prose, NotApplicable)
    assert prose.text.startswith("Count the vowels") and prose.text.endswith("stops here.")
    pieces = docstring._protected_pieces(prose)
    for expected in PROTECTED:
        assert any(expected.strip() in piece for piece in pieces), expected
    free = "".join(c for c, p in zip(prose.text, prose.protected, strict=True) if not p)
    for word in ("Count", "vowels", "stopping", "found", "checks", "empty", "function"):
        assert word in free


@pytest.mark.parametrize("name", [*CHARACTER_LEVEL, *WORD_LEVEL, *TENSE])
def test_only_the_prose_changes(name):
    if name not in CHARACTER_LEVEL and WORDNET_MISSING:
        pytest.skip("WordNet is not installed")
    original = problem()
    outcome = get_transform(name, **EAGER[name])(original)
    assert not isinstance(outcome, NotApplicable), outcome
    (variant,) = outcome
    assert variant.prompt != original.prompt
    assert_only_prose_changed(original, variant)
    for piece in PROTECTED:
        assert piece in variant.prompt, piece
    edits = variant.lineage[-1].changes["edits"]
    assert edits and all(original.prompt[e["at"][0] : e["at"][1]] == e["old"] for e in edits)


@pytest.mark.parametrize("name", [*CHARACTER_LEVEL, *WORD_LEVEL])
def test_same_seed_same_output_and_seeds_differ(name):
    if name not in CHARACTER_LEVEL and WORDNET_MISSING:
        pytest.skip("WordNet is not installed")
    transform = get_transform(name)
    original = problem()
    first = [transform(original, seed=s) for s in range(4)]
    again = [transform(original, seed=s) for s in range(4)]
    prompts = [o.reason if isinstance(o, NotApplicable) else o[0].prompt for o in first]
    assert prompts == [o.reason if isinstance(o, NotApplicable) else o[0].prompt for o in again]
    assert len(set(prompts)) > 1


def test_parameters_are_settable():
    original = problem()
    (upper,) = get_transform("doc_change_case", prob=1.0)(original)
    prose = docstring.find_prose(original)
    assert not isinstance(prose, NotApplicable)
    new = (upper.block("description") or original.blocks[0]).text[prose.start :].rstrip()
    expected = "".join(
        c.swapcase() if c.isalpha() and not p else c
        for c, p in zip(prose.text, prose.protected, strict=True)
    )
    assert new == expected
    for name, params in [
        ("doc_butter_fingers", {"prob": 0.0}),
        ("doc_swap_characters", {"prob": 0.0}),
        ("doc_whitespace", {"remove_prob": 0.0, "add_prob": 0.0}),
    ]:
        assert get_transform(name, **params)(original) == NotApplicable(
            "nothing in the description changed at this seed"
        )
    with pytest.raises(UserError, match="has no parameter 'probability'"):
        get_transform("doc_change_case", probability=0.2)


def test_whitespace_keeps_lines_and_code():
    original = problem()
    (variant,) = get_transform("doc_whitespace", remove_prob=1.0, add_prob=0.0)(original)
    old = (original.block("description") or original.blocks[0]).text
    new = (variant.block("description") or variant.blocks[0]).text
    assert new.count("\n") == old.count("\n")
    assert "Countthevowels" in new and "helper_fn(text)" in new


def test_no_description_is_not_applicable():
    bare = split_blocks(
        Problem("T/2", "test", "def f(x):\n", "f", test="def check(c):\n    pass\n")
    )
    only_examples = split_blocks(
        Problem("T/3", "test", 'def f(x):\n    """>>> f(1)\n    1\n    """\n', "f")
    )
    for name in (*CHARACTER_LEVEL, *WORD_LEVEL, *TENSE, "doc_paraphrase"):
        for p in (bare, only_examples):
            assert get_transform(name)(p) == NotApplicable("the problem has no description")


@needs_wordnet
def test_word_level_reasons():
    closed = problem("It is not the one for them or us.\n")
    assert get_transform("doc_synonym_substitution")(closed) == NotApplicable(
        "no word of the description has a WordNet synonym"
    )
    assert get_transform("doc_synonym_insertion")(closed) == NotApplicable(
        "no word of the description has a WordNet synonym"
    )
    assert get_transform("doc_inflectional_variation")(closed) == NotApplicable(
        "no word of the description is a noun, verb or adjective with another inflection"
    )
    assert get_transform("doc_synonym_substitution", prob=0.0)(problem()) == NotApplicable(
        "nothing in the description changed at this seed"
    )


@needs_wordnet
def test_synonyms_are_inflected_like_the_word():
    (variant,) = get_transform("doc_synonym_substitution", prob=1.0)(problem("Sort numbers.\n"))
    (edit,) = [e for e in variant.lineage[-1].changes["edits"] if e["old"] == "numbers"]
    assert edit["new"].endswith("s")  # a plural for a plural
    (inserted,) = get_transform("doc_synonym_insertion", prob=1.0)(problem("Sort numbers.\n"))
    (edit,) = [e for e in inserted.lineage[-1].changes["edits"] if e["old"] == "numbers"]
    assert edit["new"].startswith("numbers ") and edit["new"].endswith("s")


@needs_wordnet
def test_tense_moves_finite_verbs_and_leaves_imperatives():
    text = (
        "Return the sum. The function returns a list that contains numbers, and it is\n"
        "    empty when they are gone. You're given a text that doesn't end.\n"
    )
    (past,) = get_transform("doc_tense_past")(problem(text))
    (future,) = get_transform("doc_tense_future")(problem(text))
    assert (
        "Return the sum. The function returned a list that contained numbers, and it was\n"
        "    empty when they were gone. You were given a text that didn't end.\n"
    ) in past.prompt
    assert (
        "Return the sum. The function will return a list that will contain numbers, and it "
        "will be\n    empty when they will be gone. You will be given a text that won't end.\n"
    ) in future.prompt
    imperative = problem("Write a function to sort the numbers.\n")
    for name in TENSE:
        assert get_transform(name)(imperative) == NotApplicable(
            "the description has no finite present-tense verb to change"
        )


def test_missing_wordnet_is_one_sentence_naming_the_ways(monkeypatch, tmp_path):
    monkeypatch.setattr(words, "_load_wordnet", lambda: None)
    with pytest.raises(UserError) as caught:
        words.wordnet("doc_synonym_substitution")
    message = str(caught.value)
    assert message.startswith("transform doc_synonym_substitution needs WordNet 3.0")
    for way in ("apt install wordnet-base", "nltk.download('wordnet')", "BOI_WORDNET_DIR"):
        assert way in message
    monkeypatch.setenv("BOI_WORDNET_DIR", str(tmp_path))
    with pytest.raises(UserError, match="holds no WordNet dictionary"):
        words.wordnet_location()


@pytest.mark.skipif(not (words.DEBIAN_WORDNET / "data.noun").is_file(), reason="no wordnet-base")
def test_wordnet_dir_from_the_environment(monkeypatch):
    monkeypatch.setenv("BOI_WORDNET_DIR", str(words.DEBIAN_WORDNET))
    assert words.wordnet_location() == words.DEBIAN_WORDNET


@needs_wordnet
def test_part_of_speech_by_sense_counts():
    assert words.part_of_speech("numbers", "t") == "n"
    assert words.part_of_speech("returns", "t") == "v"
    assert words.part_of_speech("quickly", "t") == "r"
    assert words.part_of_speech("the", "t") is None  # closed class: never looked up


# --- paraphrase ---------------------------------------------------------------------------


class FakeParaphraser(BackendBase):
    """Answers the paraphrase prompt from `REPLIES` (description -> reply); records calls."""

    default_model = ""
    identity = "fake|paraphraser"
    REPLIES: dict[str, str] = {}
    calls: list[DecodingConfig] = []

    def complete_many(
        self, requests: Sequence[Request], decoding: DecodingConfig
    ) -> Iterator[tuple[int, list[str]]]:
        for position, request in enumerate(requests):
            FakeParaphraser.calls.append(decoding)
            text = request.prompt.rsplit("Text: ", 1)[1].split("\nRewrite:")[0]
            yield position, [self.REPLIES[text] for _ in request.indices]


@pytest.fixture
def fake_paraphraser():
    BACKENDS.register("fake_paraphraser", f"{__name__}:FakeParaphraser")
    docstring.paraphrase_backend.cache_clear()
    FakeParaphraser.calls.clear()
    yield FakeParaphraser
    BACKENDS.unregister("fake_paraphraser")
    docstring.paraphrase_backend.cache_clear()


SHORT = "Count the vowels in text, at most max_count of them.\n"


def test_paraphrase_replaces_the_prose_and_keeps_the_rest(fake_paraphraser):
    fake_paraphraser.REPLIES = {
        "Count the vowels in text, at most max_count of them.": (
            " How many vowels text holds, up to max_count.\nignored second line"
        )
    }
    original = problem(SHORT)
    transform = get_transform("doc_paraphrase", model="fake_paraphraser", max_new_tokens=40)
    (variant,) = transform(original)
    assert '    """How many vowels text holds, up to max_count.\n    >>> count_vowels(' in (
        variant.prompt
    )
    assert_only_prose_changed(original, variant)
    assert variant.lineage[-1].changes["paraphrase_model"] == "fake_paraphraser"
    (decoding,) = fake_paraphraser.calls
    assert decoding.temperature == 0 and decoding.max_new_tokens == 40
    transform(original)
    assert docstring.paraphrase_backend.cache_info().currsize == 1  # loaded once per model


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "the paraphrase is empty"),
        ("Count the vowels in text, at most max_count of them.", "the paraphrase repeats the description"),
        ("Count vowels, at most max_count of them.", "the paraphrase drops or alters 'text'"),
        ("Count the vowels in text, at most maxcount.", "the paraphrase drops or alters 'max_count'"),
        ('Count """vowels""" in text up to max_count.', "the paraphrase holds a backslash or the docstring's quotes"),
    ],
)  # fmt: skip
def test_paraphrase_refusals(fake_paraphraser, reply, reason):
    fake_paraphraser.REPLIES = {"Count the vowels in text, at most max_count of them.": reply}
    outcome = get_transform("doc_paraphrase", model="fake_paraphraser")(problem(SHORT))
    assert outcome == NotApplicable(reason)


def test_paraphrase_skips_long_descriptions(fake_paraphraser):
    outcome = get_transform("doc_paraphrase", model="fake_paraphraser", max_chars=20)(
        problem(SHORT)
    )
    assert outcome == NotApplicable("the description has 52 characters, more than 19")
    assert fake_paraphraser.calls == []


@pytest.mark.embedded
def test_paraphrase_with_the_embedded_model():
    """The real embedded SmolLM2-135M: a greedy answer, the same twice, either a paraphrase
    that keeps every protected piece or one of the stated refusals."""
    original = problem("Return the number of vowels in the given word.\n")
    transform = get_transform("doc_paraphrase", max_new_tokens=48)
    first, again = transform(original), transform(original)
    assert first == again
    if isinstance(first, NotApplicable):
        assert first.reason.startswith("the paraphrase "), first.reason
    else:
        assert_only_prose_changed(original, first[0])


# --- the datasets -------------------------------------------------------------------------


def test_every_variant_of_humaneval_and_mbpp_passes(humaneval, mbpp_sweep, tmp_path):
    """Seed 0 of every docstring perturbation but the paraphrase (a model call per
    problem; tested above) on every problem: only the prose changes, and each variant passes
    with its reference solution in the sandbox."""
    started = time.monotonic()
    names = (
        (*CHARACTER_LEVEL, *TENSE) if WORDNET_MISSING else (*CHARACTER_LEVEL, *WORD_LEVEL, *TENSE)
    )
    config = PerturbConfig(transforms=names, random_seeds=1, keep_unchanged=False)
    for loaded in (humaneval, mbpp_sweep):
        result = run_catalogue(loaded.problems, config)
        originals = {p.task_id: split_blocks(p) for p in loaded.problems}
        assert {v.transform for v in result.variants} == set(names)
        for variant in result.variants:
            assert_only_prose_changed(originals[variant.source_task_id], variant)
        out = tmp_path / f"{loaded.problems[0].benchmark}.jsonl"
        assert failing_references(result.variants, out) == {}
    print(f"docstring variants of HumanEval and MBPP: {time.monotonic() - started:.0f}s")
