"""A tiny randomly initialised Llama and a byte-level BPE tokenizer trained in-process, so critic
tests run in seconds without the embedded model."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def tiny_lm():
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from benchmarks.loaders import load_benchmark

    corpus = [p.prompt for p in load_benchmark("humaneval").problems[:40]]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(corpus, vocab_size=400, special_tokens=["<s>", "</s>", "<pad>"])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)  # test-only: the weights just need to be fixed and non-trivial
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        # Random init gives near-uniform predictions; sharpen them so that differences between
        # prompts (and bugs) show in the scores.
        model.lm_head.weight.mul_(20)
    return model, tokenizer


def tiny_scorer(**overrides):
    from critic.scoring import HFScorer, HFScorerConfig

    model, tokenizer = tiny_lm()
    return HFScorer(
        HFScorerConfig(model="tiny-test-llama", **overrides), model=model, tokenizer=tokenizer
    )
