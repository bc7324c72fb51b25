"""Build perturb/data/code_vocabulary.txt: the words Python code itself uses, for the keyword
pipeline's code-relatedness test (a candidate is code-related when the embedder finds it close
to the anchors, or when code names things with it).

The corpus is the standard library of the running interpreter (every machine has it offline),
test suites and IDLE left out. A word is kept when it is a part (split at underscores and
camelCase, 3+ letters) of a function, class, parameter, variable or attribute name in at least
MIN_FILES modules: frequent enough to be vocabulary, not one module's story.

    .venv/bin/python scripts/build_code_vocabulary.py [MIN_FILES]   # default 25
"""

from __future__ import annotations

import ast
import re
import sys
import sysconfig
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "perturb" / "data" / "code_vocabulary.txt"
SKIP_PARTS = {"test", "tests", "idlelib", "site-packages", "lib2to3"}


def identifier_words(name: str) -> set[str]:
    words = set()
    for chunk in name.split("_"):
        for part in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", chunk):
            if len(part) > 2 and part.isalpha():
                words.add(part.lower())
    return words


def module_words(tree: ast.AST) -> set[str]:
    words: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            words |= identifier_words(node.name)
        elif isinstance(node, ast.arg):
            words |= identifier_words(node.arg)
        elif isinstance(node, ast.Name):
            words |= identifier_words(node.id)
        elif isinstance(node, ast.Attribute):
            words |= identifier_words(node.attr)
    return words


def main() -> int:
    min_files = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    counts: Counter[str] = Counter()
    modules = unparsable = 0
    for path in sorted(stdlib.rglob("*.py")):
        if SKIP_PARTS & set(path.relative_to(stdlib).parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            unparsable += 1
            continue
        modules += 1
        counts.update(module_words(tree))
    words = sorted(w for w, n in counts.items() if n >= min_files)
    version = ".".join(map(str, sys.version_info[:3]))
    header = (
        f"# Words of Python identifiers in >= {min_files} standard-library modules "
        f"(Python {version}, {modules} modules, tests and IDLE left out, {unparsable} unparsable).\n"
        "# Built by scripts/build_code_vocabulary.py; one word per line.\n"
    )
    OUT.write_text(header + "".join(w + "\n" for w in words), encoding="utf-8")
    print(f"{OUT}: {len(words)} words from {modules} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
