"""mkdocs-gen-files hook: the reference pages generated from the code (scripts/docs_reference.py)."""

import sys
from pathlib import Path

import mkdocs_gen_files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.docs_reference import write_pages

write_pages(mkdocs_gen_files.open)
