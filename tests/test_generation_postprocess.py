"""Reading model output into completions (stop truncation, chat replies), DecodingConfig, seeds.

The reply shapes of whole chat replies live in the corpus (tests/test_replies.py); these are
the reader's unit cases for prompts to complete."""

from __future__ import annotations

import itertools

import pytest

from benchmarks.common.errors import UserError
from benchmarks.generation import (
    HUMANEVAL_STOP,
    BackendSpec,
    DecodingConfig,
    read_completion_reply,
    truncate_at_stop,
)
from benchmarks.generation._decoding import SEED_STRIDE, base_seed, sample_seed

PROMPT = (
    "from typing import List\n\n\n"
    "def below_zero(operations: List[int]) -> bool:\n"
    '    """ Return True if the balance falls below zero.\n'
    "    >>> below_zero([1, 2, -4, 5])\n"
    "    True\n"
    '    """\n'
)
BODY = "    balance = 0\n    for op in operations:\n        balance += op\n        if balance < 0:\n            return True\n    return False\n"


def postprocess(raw: str, prompt: str, stop: tuple[str, ...], chat: bool) -> str:
    return read_completion_reply(raw, prompt, chat=chat, stop=stop).completion


def extract_function_body(reply: str, prompt: str) -> str:
    return read_completion_reply(reply, prompt, chat=True).completion


def _run(prompt: str, completion: str) -> dict:
    namespace: dict = {}
    exec(prompt + completion, namespace)
    return namespace


def test_truncate_at_the_earliest_stop():
    text = BODY + "\n\nif __name__ == '__main__':\n    print(1)\n\ndef extra():\n    pass\n"
    assert truncate_at_stop(text, HUMANEVAL_STOP) == BODY + "\n"
    assert truncate_at_stop("    return 1\n# done\n", HUMANEVAL_STOP) == "    return 1"
    assert truncate_at_stop(
        "    # comment inside the body\n    return 1\n", HUMANEVAL_STOP
    ).endswith("return 1\n")
    assert truncate_at_stop("abc", ()) == "abc"
    assert truncate_at_stop("\ndef f():", HUMANEVAL_STOP) == ""


def test_chat_reply_with_full_function_becomes_a_body():
    reply = (
        "Here is the solution:\n\n```python\nimport math\nfrom typing import List\n\n"
        "def below_zero(operations: List[int],\n               ) -> bool:\n"
        '    """ Return True if the balance falls below zero.\n    >>> below_zero([1])\n    """\n'
        "    balance = 0\n    for op in operations:\n        balance += op\n"
        "        if balance < 0:\n            return True\n    return False\n\n\n"
        "print(below_zero([1, -2]))\n```\n\nThis works because..."
    )
    completion = postprocess(reply, PROMPT, HUMANEVAL_STOP, chat=True)
    # The unused import is left out (the prompt has List), the example print too.
    assert completion == BODY
    function = _run(PROMPT, completion)["below_zero"]
    assert function([1, 2, -4, 5]) is True and function([1]) is False


def test_chat_reply_variants():
    # Body only, in an unlabelled fence, indented by 2.
    body_only = "```\n  total = sum(operations)\n  return total < 0\n```"
    assert (
        extract_function_body(body_only, PROMPT)
        == "    total = sum(operations)\n    return total < 0\n"
    )
    # No fence at all, one-line function.
    assert (
        extract_function_body("def below_zero(ops): return False", PROMPT) == "    return False\n"
    )
    # Reply cut by max tokens inside its code block: truncated, never scored as code.
    cut = "```python\ndef below_zero(operations):\n    return any(\n"
    reading = read_completion_reply(cut, PROMPT, chat=True)
    assert (reading.status, reading.completion) == ("truncated", "")
    # Another language's block first, then the right one; helper defined before the function,
    # kept after it at column 0.
    reply = (
        "```bash\npython x.py\n```\n```python\ndef helper(x):\n    return x\n\n"
        "def below_zero(operations):\n    return helper(False)\n```"
    )
    assert extract_function_body(reply, PROMPT) == (
        "    return helper(False)\n\n\ndef helper(x):\n    return x\n"
    )
    # The model renamed the function: its only function is taken.
    assert (
        extract_function_body("```python\ndef solve(ops):\n    return True\n```", PROMPT)
        == "    return True\n"
    )
    # A method prompt: the body is indented to the method's docstring.
    method = 'class A:\n    def run(self):\n        """Go."""\n'
    assert (
        extract_function_body("```python\ndef run(self):\n    return 1\n```", method)
        == "        return 1\n"
    )
    # A statement without a function (stdin/stdout problems): the program, dedented.
    statement = '"""Read n and print n + 1."""\n'
    assert (
        extract_function_body("```python\n  n = int(input())\n  print(n + 1)\n```", statement)
        == "n = int(input())\nprint(n + 1)\n"
    )
    assert read_completion_reply("", PROMPT, chat=True).status == "no_code"


def test_completion_mode_only_truncates():
    raw = BODY + "\n\ndef check():\n    pass\n"
    assert postprocess(raw, PROMPT, HUMANEVAL_STOP, chat=False) == BODY + "\n"


def test_decoding_validation_and_cache_fields():
    with pytest.raises(UserError, match="temperature"):
        DecodingConfig(temperature=-1)
    with pytest.raises(UserError, match="top_p"):
        DecodingConfig(top_p=0)
    with pytest.raises(UserError, match="n must"):
        DecodingConfig(n=0)
    with pytest.raises(UserError, match="list of strings"):
        DecodingConfig(stop="\ndef ")
    with pytest.raises(UserError, match="non-empty"):
        DecodingConfig(stop=["", "\n#"])
    base = DecodingConfig(n=1)
    assert DecodingConfig(n=100).cache_fields() == base.cache_fields()
    for change in (
        {"temperature": 0.8},
        {"top_p": 0.5},
        {"max_new_tokens": 9},
        {"seed": 1},
        {"stop": ["x"]},
        {"chat": True},
    ):
        assert DecodingConfig(**{**base.to_json(), **change}).cache_fields() != base.cache_fields()
    assert DecodingConfig(stop=["a"]).stop == ("a",)


def test_seeds_of_prompts_and_runs_never_overlap():
    # vLLM gives child i of a request seed + i: the ranges [base, base + n) must be disjoint.
    bases = sorted(base_seed(seed, f"{p:064x}") for seed in range(10) for p in range(200))
    assert all(b % SEED_STRIDE == 0 for b in bases)
    assert all(later - earlier >= SEED_STRIDE for earlier, later in itertools.pairwise(bases))
    assert sample_seed(3, "ab", 7) == base_seed(3, "ab") + 7 < 2**63


def test_backend_spec_validation():
    with pytest.raises(UserError, match="did you mean 'vllm'"):
        BackendSpec(kind="vlm")
    with pytest.raises(UserError, match="base_url"):
        BackendSpec(kind="openai", model="m")
    with pytest.raises(UserError, match="dtype"):
        BackendSpec(dtype="float64")
    with pytest.raises(UserError, match="batch_size"):
        BackendSpec(batch_size=0)
    with pytest.raises(UserError, match="did you mean 'retries'"):
        BackendSpec(kind="openai", model="m", base_url="http://127.0.0.1:1/v1", retires=2)
    with pytest.raises(UserError, match="not a config key of backend kind 'hf'"):
        BackendSpec(kind="hf", base_url="http://127.0.0.1:1/v1")
    described = BackendSpec(kind="openai", model="m", base_url="http://h/v1").describe()
    assert described["api_key_env"] == "OPENAI_API_KEY"  # the variable's name, never its value
    assert list(BackendSpec().describe()) == [
        "kind", "model", "revision", "dtype", "device", "batch_size"
    ]  # fmt: skip


def test_importing_generation_imports_no_heavy_library():
    import subprocess
    import sys

    code = (
        "import sys, benchmarks.generation\n"
        "heavy = [m for m in ('torch', 'transformers', 'vllm', 'httpx', 'httpx2') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


PARTIAL = 'def gcd(a: int, b: int) -> int:\n    """Greatest common divisor."""\n    while b:\n'
SPLIT = PARTIAL.replace("    while b:\n", "    while  \\\n  b:\n")  # ReCode's split_lines


def test_a_reply_restating_the_partial_code_continues_it_instead_of_repeating_it():
    """ReCode's partial prompts hold the start of the body; a chat model restates the whole
    function. The restated lines are left out, so prompt + completion is the function once."""
    rest = "        a, b = b, a % b\n    return a\n"
    reply = f"```python\ndef gcd(a: int, b: int) -> int:\n    while b:\n{rest}```"
    assert extract_function_body(reply, PARTIAL) == rest
    namespace: dict[str, object] = {}
    exec(PARTIAL + rest, namespace)
    assert namespace["gcd"](12, 18) == 6  # type: ignore[operator]
    # Restated with a continuation line indented less than the body: the body keeps its own
    # indentation (that of its first code line).
    split_reply = f"```python\ndef gcd(a: int, b: int) -> int:\n    while  \\\n  b:\n{rest}```"
    assert extract_function_body(split_reply, SPLIT) == rest
    # A reply that rewrites the function instead of continuing the partial code cannot
    # complete the prompt (`while b:` would get no body): no code to test, and why.
    other = "```python\ndef gcd(a, b):\n    return a if not b else gcd(b, a % b)\n```"
    reading = read_completion_reply(other, PARTIAL, chat=True)
    assert reading.status == "no_code" and "partial code" in reading.reason


STATEMENT = '"""Read n and print 2n."""\n'


def test_a_chat_reply_to_a_statement_takes_its_last_whole_program():
    program = "n = int(input())\nprint(2 * n)"
    # The program, then a block of example input and one that only runs an example: neither
    # is the program.
    reply = f"```python\n{program}\n```\nInput:\n```\n3\n```\nTry:\n```python\nprint(2 * 3)\n```"
    reading = read_completion_reply(reply, STATEMENT, chat=True)
    assert (reading.status, reading.completion) == ("extracted", program + "\n")
    # A draft, then a corrected program: the corrected one.
    fixed = "import sys\nn = int(sys.stdin.readline())\nprint(n * 2)"
    reply = f"```python\nprint(int(input()) + 2)\n```\nOops, fixed:\n```python\n{fixed}\n```"
    assert read_completion_reply(reply, STATEMENT, chat=True).completion == fixed + "\n"
    # Cut off inside the program: truncated, never scored.
    cut = read_completion_reply("```python\nn = int(input())\nprint(2 *", STATEMENT, chat=True)
    assert (cut.status, cut.completion) == ("truncated", "")
    # A complete program, then a revision cut off: the complete one.
    reply = f"```python\n{program}\n```\nShorter:\n```python\nprint(2 * int(inp"
    assert read_completion_reply(reply, STATEMENT, chat=True).completion == program + "\n"
    assert read_completion_reply("No idea.", STATEMENT, chat=True).status == "no_code"
