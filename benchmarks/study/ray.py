"""`--ray [ADDRESS]` (every study: `boi run`, `boi bias run`, `boi bias test`): the shards of
one run as Ray tasks, then `boi merge`.

Ray is the engine most serving stacks in this field already run on (vLLM spans nodes with it),
so a run goes where the user's GPUs already are instead of onto a scheme of our own. Each task
is `run_study(study, shard=Shard(i, n))` on some node: generation through the configured
backend there, execution in that node's own sandbox pool. Each task writes its shard directory
under `OUT.shards/`, and the driver merges them into OUT once every task is done. The result is
the unsharded run's, byte for byte, because it is exactly `boi run --shard` + `boi merge`.

The shard directories must be on a filesystem every node sees (NFS, a mounted bucket: what a
cluster's jobs share anyway); on one machine that is any directory. A task that fails leaves
its shard resumable: the same command runs again and every finished shard is reused from its
caches. Ray is an optional extra (`pip install -e '.[ray]'` in the boi checkout), imported only here.
"""

from __future__ import annotations

import importlib
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.common.errors import UserError
from benchmarks.study import Study, StudyOutcome, run_study, study_path
from benchmarks.study.merge import merge_study
from benchmarks.study.shards import Shard

GPU_BACKENDS = ("vllm",)
REACH_TIMEOUT_S = 10


def shard_dirs(out: Path, count: int) -> list[Path]:
    """Where the shards of a Ray run of OUT are written (beside OUT, which the merge claims)."""
    return [out.parent / f"{out.name}.shards" / f"{i}-of-{count}" for i in range(count)]


def _gpus_per_shard(study: Study) -> float:
    """A GPU for each shard whose backend runs a model on one; none for HTTP and CPU backends."""
    for spec in study.config.models:
        device = str(getattr(spec.options, "device", "") or "")
        if spec.kind in GPU_BACKENDS or device.startswith("cuda"):
            return 1.0
    return 0.0


def _study_class(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _run_shard(path: str, config_json: dict[str, Any], index: int, count: int) -> str:
    """One shard, on whichever node Ray placed it; returns its summary line."""
    study = _study_class(path).from_config(config_json)
    return run_study(study, shard=Shard(index, count), log=print).summary_line


def _check_reachable(address: str) -> None:
    """Refuse an address nothing listens on at once: ray.init retries such an address for
    minutes before it gives up."""
    if address == "auto":
        return  # Ray finds the local cluster's address itself
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(
            f"--ray {address} is not a Ray address; give host:port (the head's GCS port, 6379 "
            "by default), ray://host:10001, or auto."
        )
    try:
        socket.create_connection((host, int(port)), timeout=REACH_TIMEOUT_S).close()
    except OSError as err:
        raise UserError(
            f"could not connect to the Ray cluster at {address} ({err.strerror or err}); start "
            "it with `ray start --head` or check the address."
        ) from None


def run_study_on_ray(
    study: Study,
    address: str | None,
    shards: int | None = None,
    log: Callable[[str], None] = print,
) -> StudyOutcome:
    """Run `study` as `shards` Ray tasks (default: one per GPU, or per CPU without GPUs) and
    merge them into its out_dir."""
    try:
        import ray  # optional extra: pip install -e '.[ray]' in the checkout
    except ImportError:
        raise UserError(
            "--ray needs Ray: run pip install -e '.[ray]' in the boi checkout (or pip install "
            "'ray>=2.9'), then run again."
        ) from None
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            _check_reachable(address)
        try:
            ray.init(address=address or None, log_to_driver=True)
        except (ConnectionError, RuntimeError, ValueError) as err:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise UserError(
                f"could not connect to {where} ({str(err).splitlines()[0]}); start it with "
                "`ray start --head` or check the address."
            ) from None
    try:
        gpus = _gpus_per_shard(study)
        resources = ray.cluster_resources()
        count = shards or max(1, int(resources.get("GPU", 0) if gpus else resources.get("CPU", 1)))
        out = Path(study.config.out_dir)
        config_json = study.claim_spec(str(out)).config
        dirs = shard_dirs(out, count)
        log(
            f"[{study.command} --ray] {count} shards on {resources.get('CPU', 0):g} CPUs, {resources.get('GPU', 0):g} GPUs"
        )
        task = ray.remote(num_cpus=1, num_gpus=gpus, max_retries=0)(_run_shard)
        pending = {
            task.remote(
                study_path(study), {**config_json, "out_dir": str(path)}, index, count
            ): index
            for index, path in enumerate(dirs)
        }
        failed: list[str] = []
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(done[0])
            try:
                log(f"  {ray.get(done[0])}")
            except ray.exceptions.RayTaskError as err:
                failed.append(f"shard {index}/{count}: {str(err.cause).splitlines()[0]}")
        if failed:
            raise UserError(
                f"{len(failed)} of {count} shards failed ({'; '.join(failed)}); the finished "
                "ones are kept, so running the same command again redoes only what is missing."
            )
    finally:
        if started_here:
            ray.shutdown()
    return merge_study(
        lambda _, config, recorded: type(study).from_config(config, recorded), out, dirs, log
    )
