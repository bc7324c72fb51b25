"""Log-probability of prompts under a causal LM: the critic's raw measurement.

A scorer turns prompts into `PromptScore`s: the log-probability of every scored token with the
character span it covers, so totals, per-token means and per-block sums all come from the same
numbers. Two backends:

- `HFScorer`: a local transformers model (the embedded SmolLM2 by default), CPU or GPU,
  float32 or bfloat16. Prompts are batched (padding + attention mask), identical prompts are
  scored once, and prompts that share a long token prefix (an original and its variants) run
  that prefix once and reuse its key/value cache. Only the log-probability of each target token
  is kept: the vocabulary projection runs on a bounded number of positions at a time, so memory
  stays flat on long prompts and large vocabularies.
- `EndpointScorer`: an OpenAI-compatible `/v1/completions` endpoint that echoes prompt
  log-probabilities (`echo` + `logprobs`, as vLLM and llama-cpp-python servers do), for models
  too large to run here, through the one HTTP client (`benchmarks.common.http`: 429/5xx,
  timeouts and dropped connections are retried with backoff). It sends a list of prompts per
  request where the server takes one (vLLM) and one prompt per request where it does not
  (llama-cpp-python), learning which from the first request, with a bounded number of requests
  in flight. The echo is checked, not trusted: the echoed tokens must spell the prompt, every
  log-probability must be one, and they must belong to the tokens they are echoed with (not to
  the next position), else a UserError names the endpoint and what is wrong. The API key is
  read from an environment variable and never logged.

`SCORERS` names them ("hf", "endpoint"); each scorer class declares its `Config` dataclass, and
`load_scorer(name, config)` builds one from a config or a mapping. One module each: what every
scorer shares (`Scorer`, `PromptScore`, `SCORERS`, `load_scorer`) in `_base`, `HFScorer` in
`_hf`, `EndpointScorer` in `_endpoint`; a new scorer is one module plus one line in `SCORERS`.

Every token is scored given what precedes it; the first token is scored given the model's
start token (BOS, else EOS) when the tokenizer has one. Prompts longer than the model's context
are truncated from the left with a warning: the score then covers only the kept tail, which
`PromptScore.truncated_tokens` records (the plausibility gate rejects such comparisons).
"""

from critic.scoring._base import SCORERS, EmptyPromptError, PromptScore, Scorer, load_scorer
from critic.scoring._endpoint import (
    BATCHING,
    LOGPROB_TOLERANCE,
    SHIFT_EVIDENCE,
    SHIFT_EVIDENCE_END,
    EndpointScorer,
    EndpointScorerConfig,
)
from critic.scoring._hf import HFScorer, HFScorerConfig

__all__ = [
    "BATCHING",
    "LOGPROB_TOLERANCE",
    "SCORERS",
    "SHIFT_EVIDENCE",
    "SHIFT_EVIDENCE_END",
    "EmptyPromptError",
    "EndpointScorer",
    "EndpointScorerConfig",
    "HFScorer",
    "HFScorerConfig",
    "PromptScore",
    "Scorer",
    "load_scorer",
]
