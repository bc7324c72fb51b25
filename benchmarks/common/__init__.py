"""Plumbing every stage imports, and that imports no stage.

errors      UserError and did-you-mean suggestions: bad input in one sentence
config      typed dataclass configs <-> YAML/JSON <-> argparse flags
jsonl       JSONL readers naming file and line, atomic writers, the append-only log
outputs     the output contract: where a command may write, checked before it runs
provenance  hashes, git revision, package versions, the run record
rundir      run directories: manifest, config hash, refuse-or-resume
cache       where machine-local caches live
models      the embedded model, model references and the one Hugging Face causal-LM loader
http        the one OpenAI-compatible HTTP client
registry    lazy "module:Class" registries (backends, datasets, scorers)

Nothing here imports from `benchmarks` outside `benchmarks.common`, nor from `perturb`,
`critic`, `finetune` or `boi`: tests/test_architecture.py holds that line.
"""
