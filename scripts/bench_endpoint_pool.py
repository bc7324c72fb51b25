"""Benchmark: the `openai` backend's endpoint pool against one server.

Four fake OpenAI-compatible servers run in processes of their own (as real servers do, so
they do not share this process's interpreter lock), each with `--slots` batch slots (a GPU
that decodes that many requests at once) and a fixed `--latency-ms` per request; a request
that finds every slot taken waits for one. Their answers depend only on the prompt and the
sample's seed, as servers of one model with seeded sampling do.

The same `--requests` requests (problems x `--variants` variants that share the problem's
text up to their last line, n = 2 x samples_per_request, so each prompt is two requests) go
through `generate_samples` with a fresh cache: to one server, to the pool of four, and to the
pool with prefix affinity turned off, all with `max_concurrency` = 2 x slots (per server). The
script prints throughput, the ratio to one server, and the prefix hits (requests sent to a
server that had already been sent a prompt of the same problem, whose prefix cache would hold
the shared text), and exits non-zero if any outputs differ from one server's or the pool's
ratio is below `--min-ratio`.

    .venv/bin/python scripts/bench_endpoint_pool.py
    .venv/bin/python scripts/bench_endpoint_pool.py --requests 400 --latency-ms 50 --slots 4
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import benchmarks.generation._openai as openai_backend
from benchmarks.generation import (
    BackendSpec,
    DecodingConfig,
    generate_samples,
    load_backend,
)

SERVERS = 4
SAMPLES_PER_REQUEST = 4


class FakeServer(ThreadingHTTPServer):
    """An OpenAI-compatible `/v1/completions` with `slots` requests decoded at once."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, latency_s: float, slots: int) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.latency_s = latency_s
        self.slots = threading.Semaphore(slots)
        self.prompts: list[str] = []  # in the order they arrived
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: FakeServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.prompts.append(body["prompt"])
        with self.server.slots:
            time.sleep(self.server.latency_s)
        choices = [
            {"index": i, "text": completion(body["prompt"], body["seed"] + i)}
            for i in range(body["n"])
        ]
        data = json.dumps({"choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(conn: Connection, latency_s: float, slots: int) -> None:
    """A server process: sends its port, then answers "take" (the prompts it was sent since
    the last "take") until "stop"."""
    server = FakeServer(latency_s, slots)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    conn.send(server.server_port)
    while conn.recv() == "take":
        with server.lock:
            conn.send(server.prompts)
            server.prompts = []
    server.shutdown()
    server.server_close()


def completion(prompt: str, seed: int) -> str:
    return f"    return {hashlib.sha256(f'{prompt}|{seed}'.encode()).hexdigest()[:16]!r}\n"


def make_prompts(problems: int, variants: int) -> dict[str, str]:
    """Variants of a problem share its signature and docstring and differ in the last line."""
    prompts = {}
    for p in range(problems):
        body = f"def problem_{p}(values):\n    '''{'Describe the task in detail. ' * 12}\n"
        for v in range(variants):
            prompts[f"P{p}/v{v}"] = body + f"    Variant {v}.\n    '''\n"
    return prompts


def problem_of(prompt: str) -> str:
    return prompt.split("(", 1)[0]


def prefix_hits(sent: list[list[str]]) -> int:
    """Requests whose server had already been sent a prompt of the same problem."""
    hits = 0
    for prompts in sent:
        seen: set[str] = set()
        for prompt in prompts:
            hits += problem_of(prompt) in seen
            seen.add(problem_of(prompt))
    return hits


def run(urls: list[str], prompts: dict[str, str], slots: int, cache: Path) -> tuple[float, dict]:
    spec = BackendSpec(
        kind="openai",
        model="fake",
        base_url=urls,
        max_concurrency=2 * slots,
        samples_per_request=SAMPLES_PER_REQUEST,
        retries=0,
    )
    backend = load_backend(spec)
    decoding = DecodingConfig(temperature=0.8, n=2 * SAMPLES_PER_REQUEST, seed=0)
    start = time.perf_counter()
    outcome = generate_samples(backend, prompts, decoding, cache, progress=False)
    return time.perf_counter() - start, outcome.raw


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="requests per side")
    parser.add_argument("--variants", type=int, default=4, help="prompts per problem")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--slots", type=int, default=4, help="requests one server decodes at once")
    parser.add_argument("--min-ratio", type=float, default=3.5)
    args = parser.parse_args()

    prompts = make_prompts(max(1, args.requests // (2 * args.variants)), args.variants)
    problems = len({problem_of(p) for p in prompts.values()})
    requests = 2 * len(prompts)
    pipes, processes, urls = [], [], []
    for _ in range(SERVERS):
        ours, theirs = multiprocessing.Pipe()
        process = multiprocessing.Process(
            target=serve, args=(theirs, args.latency_ms / 1000, args.slots), daemon=True
        )
        process.start()
        pipes.append(ours)
        processes.append(process)
        urls.append(f"http://127.0.0.1:{ours.recv()}/v1")

    def take() -> list[list[str]]:
        for pipe in pipes:
            pipe.send("take")
        return [pipe.recv() for pipe in pipes]

    rows: list[tuple[str, float, dict, list[list[str]]]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, servers, affinity in [
                ("1 server", urls[:1], True),
                (f"pool of {SERVERS}", urls, True),
                (f"pool of {SERVERS}, no affinity", urls, False),
            ]:
                openai_backend.AFFINITY_SHARE = 0.25 if affinity else float("inf")
                seconds, raw = run(servers, prompts, args.slots, Path(tmp) / f"{len(rows)}.jsonl")
                rows.append((name, seconds, raw, take()))
    finally:
        for pipe in pipes:
            pipe.send("stop")
        for process in processes:
            process.join(5)

    print(
        f"{requests} requests ({problems} problems x {args.variants} variants x 2 requests of "
        f"{SAMPLES_PER_REQUEST} samples), {args.latency_ms:g} ms each, {args.slots} slots per "
        f"server, max_concurrency {2 * args.slots} per server\n"
    )
    print("| side | seconds | requests/s | x one server | prefix hits | requests per server |")
    print("|---|---|---|---|---|---|")
    one_s, one_raw = rows[0][1], rows[0][2]
    for name, seconds, _, sent in rows:
        per_server = [len(prompts) for prompts in sent if prompts]
        print(
            f"| {name} | {seconds:.2f} | {requests / seconds:.1f} | {one_s / seconds:.2f} | "
            f"{prefix_hits(sent)}/{requests} | {per_server} |"
        )
    print(f"\n(at most {requests - problems} prefix hits: a problem's first request misses)")
    same = all(raw == one_raw for _, _, raw, _ in rows)
    print(f"outputs identical: {same}")
    ratio = one_s / rows[1][1]
    if not same:
        print("error: the pool's outputs differ from one server's", file=sys.stderr)
        return 1
    if ratio < args.min_ratio:
        print(f"error: throughput ratio {ratio:.2f} < {args.min_ratio}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
