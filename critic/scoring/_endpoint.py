"""The endpoint scorer: an OpenAI-compatible `/v1/completions` endpoint that echoes prompt
log-probabilities, with the echo checked rather than trusted (see `critic.scoring`)."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.common.http import RETRY_STATUS, HTTPStatusError, OpenAIClient
from critic.scoring._base import PromptScore, check_prompts

BATCHING = ("auto", "list", "single")

# The most a log-probability may exceed 0: a token the model is sure of comes out of a float32
# log-softmax as +1e-7 or so; anything larger is not a log-probability.
LOGPROB_TOLERANCE = 1e-4

# A leading echoed token that covers no prompt text and is spelt like a special token ("<s>",
# "<|begin_of_text|>", "<bos>"): the start token vLLM echoes (with no log-probability).
_START_TOKEN = re.compile(r"<[^<>\s]{1,40}>")

# The shift check decides once this many echoed tokens have a top-1 prediction that is either
# the token itself or the next token; a call that ends with fewer decides on at least
# SHIFT_EVIDENCE_END of them (fewer prove nothing either way).
SHIFT_EVIDENCE = 16
SHIFT_EVIDENCE_END = 4

# What the first request (which learns whether the server takes a list) retries: not 500, which
# is how llama-cpp-python's server refuses a list of prompts.
_PROBE_RETRY = RETRY_STATUS - {500}


@dataclass
class EndpointScorerConfig:
    """An OpenAI-compatible completions endpoint that returns prompt log-probabilities."""

    url: str = field(metadata={"help": "base URL, e.g. http://127.0.0.1:8000/v1"})
    model: str = field(metadata={"help": "model name the server expects"})
    api_key_env: str = field(
        default="OPENAI_API_KEY", metadata={"help": "environment variable holding the API key"}
    )
    batch_size: int = field(
        default=16, metadata={"help": "prompts per request, where the server takes a list"}
    )
    batching: str = field(
        default="auto",
        metadata={
            "help": "auto (a list of prompts per request, falling back to one prompt per request "
            "when the server refuses lists, as llama.cpp's does), list, or single"
        },
    )
    concurrency: int = field(default=4, metadata={"help": "requests in flight at once"})
    max_tokens: int = field(
        default=1, metadata={"help": "tokens to generate (0 where the server allows it)"}
    )
    timeout_s: float = field(default=120.0, metadata={"help": "seconds to wait for a response"})
    retries: int = field(
        default=5, metadata={"help": "retries after 429, 5xx, timeouts or dropped connections"}
    )
    backoff_s: float = field(
        default=1.0, metadata={"help": "first retry delay; doubles each retry (capped at 60 s)"}
    )

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise UserError(f"endpoint URL {self.url!r} must start with http:// or https://.")
        if self.batching not in BATCHING:
            raise UserError(f"batching {self.batching!r} is unknown; use {', '.join(BATCHING)}.")
        if self.batch_size < 1 or self.concurrency < 1:
            raise UserError(
                f"batch_size and concurrency must be at least 1 (got {self.batch_size} and "
                f"{self.concurrency})."
            )
        if self.max_tokens < 0:
            raise UserError(f"max_tokens must be 0 or more (got {self.max_tokens}).")
        if self.retries < 0:
            raise UserError(f"retries must be 0 or more (got {self.retries}).")
        if self.timeout_s <= 0 or self.backoff_s < 0:
            raise UserError("timeout_s must be positive and backoff_s non-negative.")


@dataclass
class _ShiftCheck:
    """Whether a server's echoed log-probabilities belong to the tokens they are echoed with.

    A server that pairs each prompt token with the distribution of the *next* position
    (llama-cpp-python does, for a model whose GGUF adds no BOS token) returns numbers that look
    like log-probabilities and reconstruct the prompt, yet are not the prompt's. The echoed top-1
    token tells them apart: where it is the echoed token itself (`same`) the row predicted this
    position; where it is the next echoed token (`following`) the row predicted the next one.
    Any language model guesses right often enough for the two counts to differ widely.
    """

    same: int = 0
    following: int = 0
    settled: bool = False

    def check(self, url: str, *, final: bool) -> None:
        evidence = self.same + self.following
        if self.settled or evidence < (SHIFT_EVIDENCE_END if final else SHIFT_EVIDENCE):
            return
        if self.following > self.same:
            raise UserError(
                f"endpoint {url} echoes log-probabilities shifted by one token (in "
                f"{self.following} of {evidence} checked positions its top prediction is the "
                "prompt's next token, not the echoed one), so they are not the prompt's "
                "log-probabilities; llama-cpp-python does this for a model that adds no BOS "
                "token (start it with --kv_overrides tokenizer.ggml.add_bos_token=bool:true)."
            )
        self.settled = True


class EndpointScorer:
    """Scores prompts through `POST {url}/completions` with `echo` and `logprobs`.

    Batching: vLLM takes a list of prompts per request, llama-cpp-python's server one prompt (a
    list of several is an HTTP 500). With `batching: auto` the first request sends a list and
    learns which kind of server it is: if the list is refused (HTTP 500 or 4xx, not retried) or
    answered with the wrong number of choices, its first prompt goes alone as a plain string, and
    if that is answered the scorer sends one prompt per request from then on (`batching_used`,
    which `describe()` records; if the lone prompt fails too, that error is the answer). Either
    way up to `concurrency` requests are in flight at once.

    Validation: the echo is read, not trusted (`_read_echo`, `_ShiftCheck`); an answer that is
    not the prompt's log-probabilities is a UserError naming the endpoint and what is wrong.
    """

    Config = EndpointScorerConfig

    def __init__(self, config: EndpointScorerConfig) -> None:
        self.config = config
        # "list" or "single" once known: as configured, or learnt from the first request.
        self.batching_used: str | None = None if config.batching == "auto" else config.batching
        self._shift = _ShiftCheck()

    def describe(self) -> dict[str, Any]:
        # Never the key itself, only where it comes from. `batching_used` is None until a
        # request showed which kind of server this is (auto mode).
        return {
            "backend": "endpoint",
            "url": self.config.url,
            "model": self.config.model,
            "api_key_env": self.config.api_key_env,
            "max_tokens": self.config.max_tokens,
            "batching": self.config.batching,
            "batching_used": self.batching_used,
        }

    def client(self) -> OpenAIClient:
        """A client for the endpoint (close it, or use it as a context manager)."""
        return OpenAIClient(
            self.config.url,
            api_key_env=self.config.api_key_env,
            timeout_s=self.config.timeout_s,
            retries=self.config.retries,
            backoff_s=self.config.backoff_s,
            max_connections=self.config.concurrency,
        )

    def score(self, prompts: Sequence[str]) -> list[PromptScore]:
        check_prompts(prompts)
        unique = list(dict.fromkeys(prompts))
        by_prompt: dict[str, PromptScore] = {}
        with self.client() as client:
            url = client.url("/completions")
            if self.batching_used is None and unique:
                by_prompt.update(self._probe(client, unique[: self.config.batch_size]))
            todo = [p for p in unique if p not in by_prompt]
            size = 1 if self.batching_used == "single" else self.config.batch_size
            groups = [todo[i : i + size] for i in range(0, len(todo), size)]
            with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
                futures = [
                    pool.submit(client.post_json, "/completions", self._body(group))
                    for group in groups
                ]
                try:
                    # Answers are read in request order, so the shift check sees the same
                    # evidence in the same order however the requests finished.
                    for group, future in zip(groups, futures, strict=True):
                        scores = self._parse(url, group, future.result())
                        by_prompt.update(zip(group, scores, strict=True))
                finally:
                    for future in futures:
                        future.cancel()
        self._shift.check(url, final=True)
        return [by_prompt[p] for p in prompts]

    def _body(self, prompts: list[str], as_list: bool | None = None) -> dict[str, Any]:
        if as_list is None:
            as_list = self.batching_used != "single"
        return {
            "model": self.config.model,
            # A plain string where lists are refused: that is what such servers take.
            "prompt": prompts if as_list else prompts[0],
            "max_tokens": self.config.max_tokens,
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }

    def _probe(self, client: OpenAIClient, prompts: list[str]) -> dict[str, PromptScore]:
        """Score the first request's prompts and learn whether the server takes a list."""
        url = client.url("/completions")
        try:
            payload = client.post_json(
                "/completions", self._body(prompts, as_list=True), retry_status=_PROBE_RETRY
            )
        except HTTPStatusError as err:
            if err.status in _PROBE_RETRY:
                raise  # still failing after the retries: the server is unwell, not list-shy
        else:
            if _choices(payload, len(prompts)) is not None:
                if len(prompts) > 1:
                    self.batching_used = "list"
                return dict(zip(prompts, self._parse(url, prompts, payload), strict=True))
        payload = client.post_json("/completions", self._body(prompts[:1], as_list=False))
        # Known once the server answered, even if its echo is then refused.
        self.batching_used = "single"
        (score,) = self._parse(url, prompts[:1], payload)
        return {prompts[0]: score}

    def _parse(self, url: str, prompts: list[str], payload: Any) -> list[PromptScore]:
        choices = _choices(payload, len(prompts))
        if choices is None:
            got = payload.get("choices") if isinstance(payload, dict) else None
            raise UserError(
                f"endpoint {url} returned {len(got) if isinstance(got, list) else 'no'} "
                f"choices for {len(prompts)} prompts; it must answer each prompt with one choice "
                "(try batching: single)."
            )
        scores = []
        for prompt, choice in zip(prompts, choices, strict=True):
            score, same, following = _read_echo(url, prompt, choice.get("logprobs"))
            self._shift.same += same
            self._shift.following += following
            self._shift.check(url, final=False)
            scores.append(score)
        return scores


def _choices(payload: Any, n: int) -> list[dict[str, Any]] | None:
    """The answer's choices in prompt order, or None unless there is one (a dict) per prompt."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or len(choices) != n:
        return None
    if not all(isinstance(c, dict) for c in choices):
        return None
    return sorted(choices, key=lambda c: c.get("index", 0))


def _read_echo(url: str, prompt: str, logprobs: Any) -> tuple[PromptScore, int, int]:
    """The prompt's score from one choice's echoed `logprobs`, checked against the prompt; and
    the shift check's evidence (positions whose top-1 is this token, is the next token).

    What is allowed, because servers differ in how they echo, and nothing else:
    - a first token spelt like a special token ("<s>") that the prompt does not start with: the
      start token (vLLM echoes it; llama-cpp-python drops it); it is not scored;
    - one extra leading space on the first prompt token when the prompt has none: the dummy
      prefix a SentencePiece tokenizer adds;
    - tokens that are empty or hold U+FFFD: byte pieces of a multi-byte character that the
      server could not decode one token at a time; they may stand only for non-ASCII characters,
      and are given the span of the characters they stand for;
    - no log-probability (None) for the first echoed token, which has nothing to condition on.
    Every other echoed token must be the prompt's next characters, in order, and the echo must
    cover the whole prompt (what follows is the generated text, not scored); every
    log-probability must be a finite number at most 0 (LOGPROB_TOLERANCE for rounding). The
    server's `text_offset` is not used: vLLM counts an echoed start token's text in it.
    """
    texts = logprobs.get("tokens") if isinstance(logprobs, dict) else None
    values = logprobs.get("token_logprobs") if isinstance(logprobs, dict) else None
    if (
        not isinstance(texts, list)
        or not isinstance(values, list)
        or not values
        or len(texts) != len(values)
        or not all(isinstance(t, str) for t in texts)
    ):
        raise UserError(
            f"endpoint {url} returned no prompt log-probabilities; the server must support "
            "echo=true with logprobs (vLLM does; the OpenAI chat API does not)."
        )
    tops = logprobs.get("top_logprobs")
    if not isinstance(tops, list) or len(tops) != len(texts):
        tops = None  # optional: without it only the shift check is skipped
    spans = _align_echo(url, prompt, texts)
    lps: list[float] = []
    offsets: list[tuple[int, int]] = []
    for index, span in spans:
        value = values[index]
        if value is None and index == 0:
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise UserError(
                f"endpoint {url} echoed {value!r} as the log-probability of prompt token "
                f"{index} ({texts[index]!r}); every token after the first needs a number."
            )
        if not math.isfinite(value) or value > LOGPROB_TOLERANCE:
            raise UserError(
                f"endpoint {url} echoed {value!r} as the log-probability of prompt token "
                f"{index} ({texts[index]!r}), which no log-probability can be (they are finite "
                "and at most 0)."
            )
        lps.append(float(value))
        offsets.append(span)
    if not lps:
        raise UserError(
            f"endpoint {url} returned no log-probabilities for the prompt's tokens; check "
            "that it echoes the prompt."
        )
    same = following = 0
    if tops is not None:
        for (index, _), nxt in itertools.pairwise(spans):
            top = tops[index]
            here, after = texts[index], texts[nxt[0]]
            if not isinstance(top, dict) or not top or here == after:
                continue  # nothing to tell the two positions apart with
            numbers = {k: v for k, v in top.items() if isinstance(v, int | float)}
            best = max(numbers, key=numbers.__getitem__) if numbers else None
            same += best == here
            following += best == after
    return PromptScore(tuple(lps), tuple(offsets)), same, following


def _align_echo(url: str, prompt: str, texts: list[str]) -> list[tuple[int, tuple[int, int]]]:
    """(index into `texts`, character span) of every echoed prompt token, start token left out;
    see `_read_echo` for what is allowed. The echo ends where the prompt does."""
    cursor, index = 0, 0
    if texts and not prompt.startswith(texts[0]) and _START_TOKEN.fullmatch(texts[0]):
        index = 1
    first = index
    spans: list[tuple[int, tuple[int, int]]] = []
    pending: list[int] = []  # byte pieces waiting for the next whole token

    def flush(end: int) -> None:
        spans.extend((i, (cursor, end)) for i in pending)
        pending.clear()

    while index < len(texts) and cursor < len(prompt):
        text = texts[index]
        if text and prompt.startswith(text, cursor):
            flush(cursor)
            spans.append((index, (cursor, cursor + len(text))))
            cursor += len(text)
        elif (
            index == first
            and text.startswith(" ")
            and not prompt.startswith(" ")
            and len(text) > 1
            and prompt.startswith(text[1:])
        ):
            spans.append((index, (0, len(text) - 1)))
            cursor = len(text) - 1
        elif not text or "\ufffd" in text:
            pending.append(index)
        else:
            skip = _bytes_skipped(prompt, cursor, text) if pending else None
            if skip is not None:
                flush(cursor + skip)
                cursor += skip
                spans.append((index, (cursor, cursor + len(text))))
                cursor += len(text)
            elif pending and _all_multibyte(prompt[cursor:]):
                break  # the byte pieces end the prompt; this token is generated text
            else:
                raise UserError(
                    f"endpoint {url} echoed token {index} as {text!r} where the prompt has "
                    f"{prompt[cursor : cursor + len(text) + 8]!r} (character {cursor}), so its "
                    "log-probabilities are not of this prompt; check that it echoes the prompt."
                )
        index += 1
    if pending and cursor < len(prompt) and _all_multibyte(prompt[cursor:]):
        flush(len(prompt))
        cursor = len(prompt)
    if cursor < len(prompt) or pending:
        raise UserError(
            f"endpoint {url} echoed only the first {cursor} of the prompt's {len(prompt)} "
            "characters, so its log-probabilities are not of this prompt; check that it echoes "
            "the prompt (echo=true)."
        )
    return spans


def _all_multibyte(text: str) -> bool:
    return bool(text) and all(ord(c) > 0x7F for c in text)


def _bytes_skipped(prompt: str, cursor: int, text: str) -> int | None:
    """How many non-ASCII characters from `cursor` on byte pieces stand for, such that `text`
    follows them; None when no run of them does."""
    skip = 0
    while cursor + skip < len(prompt) and ord(prompt[cursor + skip]) > 0x7F:
        skip += 1
        if prompt.startswith(text, cursor + skip):
            return skip
    return None
