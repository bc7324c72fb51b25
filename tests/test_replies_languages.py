"""Replies in C++, Java, JavaScript and Go read into the completion to test
(`benchmarks/generation/_braces.py` through `read_completion_reply(language=...)`)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from benchmarks.generation import DecodingConfig, for_language
from benchmarks.generation._cache import decoding_key
from benchmarks.generation._decoding import chat_message
from benchmarks.generation.replies import read_completion_reply

CPP_PROMPT = (
    "/*\nReturn the sum.\n>>> add(1, 2)\n3\n*/\n#include<stdio.h>\nusing namespace std;\n"
    "int add(int a, int b){\n"
)
JAVA_PROMPT = (
    "import java.util.*;\n\nclass Solution {\n    /**\n    Return the sum.\n     */\n"
    "    public int add(int a, int b) {\n"
)
JS_PROMPT = "/* Return the sum. */\nconst add = (a, b) => {\n"
GO_PROMPT = "// Return the sum.\nfunc Add(a int, b int) interface{} {\n"


def read(reply: str, prompt: str, language: str, chat: bool = False):
    return read_completion_reply(reply, prompt, chat=chat, language=language)


def test_a_continuation_ends_where_the_prompts_braces_close():
    reading = read("    return a + b;\n}\n\nint main() { return add(1, 2); }\n", CPP_PROMPT, "cpp")
    assert reading.status == "extracted"
    assert reading.completion == "    return a + b;\n}\n"


def test_braces_in_strings_comments_and_characters_are_not_braces():
    body = "    // a } here\n    const char* s = \"}}\";\n    char c = '}';\n    return a + b;\n}\n"
    assert read(body + "int x;\n", CPP_PROMPT, "cpp").completion == body


def test_the_stops_closing_brace_is_put_back_at_the_openers_indentation():
    # Java's stop ends the method at its closing brace; the method's and the class's go back.
    reading = read("        int s = a + b;\n        return s;", JAVA_PROMPT, "java")
    assert reading.status == "extracted"
    assert reading.completion == "        int s = a + b;\n        return s;\n    }\n}\n"
    assert read("  return a + b;", JS_PROMPT, "javascript").completion == "  return a + b;\n}\n"


def test_a_continuation_cut_inside_its_own_block_is_truncated_not_code():
    reading = read("    for (int i = 0; i < a; i++) {\n        b++;", CPP_PROMPT, "cpp")
    assert reading.status == "truncated" and reading.completion == ""
    assert read('    return "abc', CPP_PROMPT, "cpp").status == "truncated"


def test_a_chat_reply_gives_the_functions_body_whatever_surrounds_it():
    reply = (
        "Sure! Here it is:\n```go\nfunc helper() int { return 0 }\n\n"
        "func Add(a int, b int) interface{} {\n\treturn a + b\n}\n```\n"
        "It calls Add(a, b) { ... } in prose."
    )
    reading = read(reply, GO_PROMPT, "go", chat=True)
    assert reading.status == "extracted", reading
    assert reading.completion == "\treturn a + b\n}\n"


def test_a_call_or_an_example_is_never_taken_for_the_definition():
    reply = (
        "```cpp\nint add(int a, int b){\n    return a + b;\n}\n"
        "int main(){\n    if (add(1, 2)) { return 1; }\n}\n```"
    )
    assert read(reply, CPP_PROMPT, "cpp", chat=True).completion == "    return a + b;\n}\n"


def test_a_chat_reply_in_another_languages_fence_or_without_the_function_is_no_code():
    assert read(
        "```python\ndef add(a, b):\n    return a + b\n```", CPP_PROMPT, "cpp", True
    ).status == ("no_code")
    assert read("I cannot help with that.", JS_PROMPT, "javascript", True).status == "no_code"
    cut = read(
        "```java\n    public int add(int a, int b) {\n        return", JAVA_PROMPT, "java", True
    )
    assert cut.status == "truncated"


def test_the_prompts_restated_description_is_not_repeated():
    prompt = "int twice(int x){\n    /*\n    Double it.\n    */\n"
    reply = "```cpp\nint twice(int x){\n    /*\n    Double it.\n    */\n    return 2 * x;\n}\n```"
    assert read(reply, prompt, "cpp", chat=True).completion.strip() == "return 2 * x;\n}"


def test_a_languages_decoding_uses_its_stops_fence_and_keeps_pythons_cache_keys():
    python = DecodingConfig()
    cpp = for_language(python, "cpp")
    assert cpp.stop == ("\n}", "\n```") and cpp.language == "cpp"
    assert "```cpp\n" in chat_message(CPP_PROMPT, cpp)
    assert "C++" in cpp.chat_instruction
    # Python's decoding is unchanged by the language field: older caches and runs still match.
    assert for_language(python, "python") is python
    assert "language" not in python.to_json() and "language" not in python.cache_fields()
    assert decoding_key(cpp) != decoding_key(python)
    # A stop the user chose is kept.
    assert for_language(DecodingConfig(stop=("\nEND",)), "go").stop == ("\nEND",)


DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "humaneval-x"
LANGUAGES = {"cpp": "cpp", "java": "java", "js": "javascript", "go": "go"}


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/humaneval-x")
@pytest.mark.parametrize("short", sorted(LANGUAGES))
def test_every_canonical_solution_reads_back_as_a_continuation_and_as_a_chat_reply(short):
    """All 164 tasks per language: the canonical solution continuing its prompt reads as the
    function (its helpers after it dropped, as HumanEval's stops drop them), and the same code
    restated in a chat reply reads as the same body."""
    language = LANGUAGES[short]
    flat = lambda text: re.sub(r"\s+", "", text)  # noqa: E731
    with gzip.open(DATA / f"humaneval_{short}.jsonl.gz", "rt", encoding="utf-8") as handle:
        tasks = [json.loads(line) for line in handle]
    assert len(tasks) == 164
    for task in tasks:
        prompt, solution = task["prompt"], task["canonical_solution"]
        continued = read(solution + "\nint main() {}\n", prompt, language)
        assert continued.status == "extracted", task["task_id"]
        assert flat(continued.completion) in flat(solution), task["task_id"]
        fence = f"```{language}\n{prompt}{solution}\n```"
        chat = read(f"Here you go:\n{fence}\nHope it helps.", prompt, language, chat=True)
        assert flat(chat.completion) == flat(continued.completion), task["task_id"]
