"""How completions are sampled: one frozen config, and the seeds every backend derives from it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields, replace
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.languages import language_named
from benchmarks.languages.python import LANGUAGE as PYTHON

# Codex-style stops for HumanEval-format prompts: anything at column 0 after the body (a new
# function, class, main guard, top-level print or comment) ends the completion.
HUMANEVAL_STOP = ("\ndef ", "\nclass ", "\nif __name__", "\nprint(", "\n#")

# What `keep_helpers` takes out of the stop set: the starts of a column-0 statement a completed
# function may need when it is called (a helper function or class, a decorator before one) and
# column-0 comments, because a model announces its helper with one ("# Helper function to
# ...") as often as its examples. A main guard, a top-level print (and anything else in
# `stop`) define nothing the function can call, so generation still ends there.
HELPER_STARTS = ("\ndef ", "\nclass ", "\nasync def ", "\n@", "\n#")
# ... and what `keep_helpers` adds: a markdown fence at column 0 is never Python, so the module
# ends there. An instruct model continuing a prompt closes its code with one and then explains
# it in prose until max_new_tokens, which HumanEval's `\n#` never let it reach.
CODE_ENDS = ("\n```",)

DEFAULT_CHAT_INSTRUCTION = PYTHON.chat_instruction

# A whole program that reads stdin (CodeContests): `print(` and `if __name__` belong to it, so
# it ends only where the model stops (or at max_new_tokens), and a chat model is asked for it.
PROGRAM_STOP: tuple[str, ...] = ()
PROGRAM_CHAT_INSTRUCTION = (
    "Write a complete Python 3 program for the following problem. It reads the input from "
    "standard input and prints the answer to standard output. Reply with the whole program in "
    "one ```python code block."
)

# Sample j of a prompt gets seed base + j, where bases of different (seed, prompt) pairs are
# multiples of SEED_STRIDE. vLLM derives the seeds of the n children of one request as
# seed + i, so requests for index runs [a, b) of one prompt use seed base + a and no two
# prompts' seed ranges overlap as long as n < SEED_STRIDE.
SEED_STRIDE = 1 << 20
_SEED_HASH_BITS = 40  # base < 2**60: fits every engine's 64-bit seed


@dataclass(frozen=True)
class DecodingConfig:
    """How to sample completions; every field except `n` is part of the generation cache key."""

    temperature: float = field(
        default=0.2, metadata={"help": "sampling temperature; 0 means greedy decoding"}
    )
    top_p: float = field(
        default=0.95, metadata={"help": "nucleus sampling mass in (0, 1]; ignored when greedy"}
    )
    max_new_tokens: int = field(default=512, metadata={"help": "most tokens generated per sample"})
    n: int = field(default=1, metadata={"help": "samples per prompt (pass@k needs n >= k)"})
    seed: int = field(
        default=0, metadata={"help": "run seed; sample j of a prompt draws from its own seed"}
    )
    stop: tuple[str, ...] = field(
        default=HUMANEVAL_STOP,
        metadata={"help": "a completion ends before the first of these strings"},
    )
    chat: bool = field(
        default=False,
        metadata={
            "help": "send the prompt as a chat message (chat template / chat endpoint) and "
            "extract the function body from the reply"
        },
    )
    chat_instruction: str = field(
        default=DEFAULT_CHAT_INSTRUCTION,
        metadata={"help": "text put before the prompt in the chat message (chat only)"},
    )
    keep_helpers: bool = field(
        default=False,
        metadata={
            "help": "completion mode: generate past a new top-level def, class or comment and "
            "keep the helpers, constants and imports the completed function calls, read as "
            "chat replies are (false: HumanEval's convention, the completion ends there)"
        },
    )
    language: str = field(
        default="python",
        metadata={
            "help": "the programming language of the prompts (benchmarks.languages): the "
            "chat message's code fence and how replies are read; a run sets it per prompt "
            "group from the problems"
        },
    )

    def __post_init__(self) -> None:
        if isinstance(self.stop, str):
            raise UserError(
                f"decoding stop must be a list of strings, not the string {self.stop!r}; "
                "write it as a list."
            )
        object.__setattr__(self, "stop", tuple(self.stop))
        if not isinstance(self.temperature, int | float) or self.temperature < 0:
            raise UserError(
                f"decoding temperature must be 0 (greedy) or more (got {self.temperature!r})."
            )
        if not isinstance(self.top_p, int | float) or not 0 < self.top_p <= 1:
            raise UserError(f"decoding top_p must be in (0, 1] (got {self.top_p!r}).")
        if not isinstance(self.max_new_tokens, int) or self.max_new_tokens < 1:
            raise UserError(
                f"decoding max_new_tokens must be a positive integer (got {self.max_new_tokens!r})."
            )
        if not isinstance(self.n, int) or not 1 <= self.n < SEED_STRIDE:
            raise UserError(
                f"decoding n must be an integer from 1 to {SEED_STRIDE - 1} (got {self.n!r})."
            )
        if not isinstance(self.seed, int) or self.seed < 0:
            raise UserError(f"decoding seed must be a non-negative integer (got {self.seed!r}).")
        for stop in self.stop:
            if not isinstance(stop, str) or not stop:
                raise UserError(
                    f"decoding stop sequences must be non-empty strings (got {stop!r}); remove it."
                )
        if self.chat and self.keep_helpers:
            raise UserError(
                "decoding keep_helpers is for completion mode (chat: false): a chat reply "
                "keeps the helpers its function calls already; remove keep_helpers."
            )
        if self.chat and not self.chat_instruction.strip():
            raise UserError("decoding chat_instruction is empty; say what the model should do.")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    @property
    def generation_stop(self) -> tuple[str, ...]:
        """The stop sequences generation ends at: `stop`, less the starts of a helper
        (`HELPER_STARTS`) and with the end of the code (`CODE_ENDS`) when `keep_helpers` reads
        the helpers after the function."""
        if not self.keep_helpers:
            return self.stop
        kept = tuple(s for s in self.stop if s not in HELPER_STARTS)
        return kept + tuple(s for s in CODE_ENDS if s not in kept)

    def cache_fields(self) -> dict[str, Any]:
        """Everything that changes a sample's text (all but `n`), normalised so that settings
        that cannot differ in output share a key: top_p is irrelevant when greedy, the chat
        instruction when not chatting. `keep_helpers` enters only when set, so the keys of
        every cache written before it existed still hold."""
        fields = {
            "temperature": float(self.temperature),
            "top_p": None if self.greedy else float(self.top_p),
            "max_new_tokens": self.max_new_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
            "chat": self.chat,
            "chat_instruction": self.chat_instruction if self.chat else None,
        }
        if self.keep_helpers:
            fields["keep_helpers"] = True
        if self.language != "python":  # likewise: Python's keys stay those of older caches
            fields["language"] = self.language
        return fields

    def to_json(self) -> dict[str, Any]:
        # `language` only where it is not Python: the configs (and so the identities) of
        # every run recorded before it existed stay as they were.
        return {
            f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
            for f in fields(self)
            if f.name != "language" or self.language != "python"
        }


def for_kind(
    decoding: DecodingConfig, stop: tuple[str, ...], chat_instruction: str
) -> DecodingConfig:
    """`decoding` for prompts of another kind than HumanEval's function completion (a whole
    program, a function written from a description): their stops and chat instruction, where
    the user left HumanEval's defaults; settings the user chose are kept."""
    changes: dict[str, Any] = {}
    if decoding.stop == HUMANEVAL_STOP:
        changes["stop"] = stop
    if decoding.chat_instruction == DEFAULT_CHAT_INSTRUCTION:
        changes["chat_instruction"] = chat_instruction
    return replace(decoding, **changes) if changes else decoding


def prompt_sha256(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def base_seed(seed: int, prompt_hash: str) -> int:
    """The seed of sample 0 of a prompt; sample j uses base_seed + j (see SEED_STRIDE)."""
    digest = hashlib.sha256(f"boi-sample-seed:{seed}:{prompt_hash}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") >> (64 - _SEED_HASH_BITS)) * SEED_STRIDE


def sample_seed(seed: int, prompt_hash: str, index: int) -> int:
    """The seed of sample `index` of a prompt: independent of how samples are batched."""
    return base_seed(seed, prompt_hash) + index


def chat_message(prompt: str, decoding: DecodingConfig) -> str:
    """The user message sent in chat mode: the instruction, then the prompt in a code block
    tagged with its language."""
    fence = "python" if decoding.language == "python" else language_named(decoding.language).name
    return f"{decoding.chat_instruction}\n\n```{fence}\n{prompt.rstrip()}\n```"


def for_language(decoding: DecodingConfig, language: str) -> DecodingConfig:
    """`decoding` for function prompts in `language` (`benchmarks.languages`): that language's
    stops and chat instruction where the user left HumanEval's (Python's) defaults, and its
    name, which decides the chat message's fence and how replies are read."""
    if language == "python":
        return decoding
    spoken = language_named(language)
    return replace(
        for_kind(decoding, spoken.stop, spoken.chat_instruction or decoding.chat_instruction),
        language=language,
    )


def chat_prompt_text(tokenizer: Any, prompt: str, decoding: DecodingConfig) -> str:
    """The model input for `prompt` in chat mode: the tokenizer's chat template applied to
    one user message (instruction + the prompt in a code block)."""
    if not getattr(tokenizer, "chat_template", None):
        raise UserError(
            "decoding chat=True but the model's tokenizer has no chat template; use chat=False "
            "or a chat/instruct model."
        )
    text: str = tokenizer.apply_chat_template(
        [{"role": "user", "content": chat_message(prompt, decoding)}],
        add_generation_prompt=True,
        tokenize=False,
    )
    return text


def model_input_text(tokenizer: Any, prompt: str, decoding: DecodingConfig) -> tuple[str, bool]:
    """(the text the model reads for `prompt`, whether the tokenizer adds its special tokens):
    the chat template's text in chat mode (which carries its own), else the prompt itself. The
    one definition of a local model's input, shared by generation and `boi analyze attention`."""
    if decoding.chat:
        return chat_prompt_text(tokenizer, prompt, decoding), False
    return prompt, True
