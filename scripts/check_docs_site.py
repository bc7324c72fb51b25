"""Check the built documentation site as a reader sees it, in headless Chromium.

    python scripts/check_docs_site.py build/docs-site [--width 1024]

Every page of the site is loaded, one after the other, in a frame `--width` pixels wide, and
measured there, after its styles and scripts ran:

- a code span in a table (a config key, a transformation's name, a command, a path) renders on
  one line: Chromium gives an inline element broken across lines one box per line, so more
  than one box is a code span split where a reader copying it would get it broken (a span
  marked `wraps`, a sentence, may break at its spaces, and only there);
- the visible text shows no Markdown or Python source: an escaped pipe (a backslash before a
  pipe, which Python-Markdown keeps inside code spans), a dataclass signature or a default
  factory's placeholder (`<factory>`).

Prints one line per problem and exits 1 when there is one, 0 when there is none, 3 when no
Chromium binary is found. `tests/test_docs_site.py` runs it on the site `make docs` built.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scripts.render_report import find_chromium, headless_command

SOURCE_SYNTAX = {
    "an escaped pipe": r"\\\|",
    "a default factory's placeholder": r"<factory>",
    "a dataclass signature": r"\w\(\w+: '[^']*' =",
}
"""Text a reader should never see on a page: what each looks like, as a JavaScript regex."""

# The frame loads each page, waits 200 ms of Chromium's virtual time (styles applied, Material's
# scripts run; animation frames never come in a headless --dump-dom), measures it and moves on;
# the results end up in <pre id="out">, which --dump-dom prints.
HARNESS = r"""<!doctype html>
<html><body>
<iframe id="frame" style="width: %(width)dpx; height: 900px; border: 0"></iframe>
<pre id="out"></pre>
<script>
const pages = %(pages)s;
const patterns = %(patterns)s;
const results = {};
const frame = document.getElementById("frame");
function breaksInsideAWord(doc, el) {
  // Where the text moves to a new line, one side of the break must be a space.
  const range = doc.createRange();
  let previous = null;
  const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const box = range.getClientRects()[0];
      if (!box) continue;
      if (previous && box.top > previous.top + 2 && !/\s/.test(previous.ch + node.data[i])) {
        return true;
      }
      previous = {top: box.top, ch: node.data[i]};
    }
  }
  return false;
}
function measure(doc) {
  const broken = [];
  for (const el of doc.querySelectorAll("td code, th code")) {
    if (!el.textContent.trim() || el.getClientRects().length < 2) continue;
    if (!el.classList.contains("wraps") || breaksInsideAWord(doc, el)) broken.push(el.textContent);
  }
  const text = doc.body ? doc.body.innerText : "";
  const shown = {};
  for (const [what, source] of Object.entries(patterns)) {
    const found = [];
    const re = new RegExp(source, "g");
    let m;
    while ((m = re.exec(text)) !== null && found.length < 5) {
      found.push(text.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30));
    }
    if (found.length) shown[what] = found;
  }
  const cells = doc.querySelectorAll("td code, th code").length;
  return {broken: broken, shown: shown, cells: cells, loaded: !!doc.body};
}
function next(i) {
  if (i >= pages.length) {
    document.getElementById("out").textContent = JSON.stringify(results);
    return;
  }
  frame.onload = () => setTimeout(() => {
    try { results[pages[i]] = measure(frame.contentDocument); }
    catch (err) { results[pages[i]] = {error: String(err)}; }
    next(i + 1);
  }, 200);
  frame.src = pages[i];
}
next(0);
</script>
</body></html>
"""


@dataclass(frozen=True)
class PageReport:
    """What one page showed: code spans in tables broken across lines, and source syntax."""

    page: str
    code_cells: int
    broken: list[str]
    shown: dict[str, list[str]]
    error: str | None = None

    def problems(self) -> list[str]:
        if self.error:
            return [f"{self.page}: could not be measured ({self.error})"]
        found = [f"{self.page}: code in a table breaks across lines: {t!r}" for t in self.broken]
        for what, excerpts in self.shown.items():
            found += [f"{self.page}: shows {what}: {' '.join(e.split())!r}" for e in excerpts]
        return found


def site_pages(site: Path) -> list[Path]:
    """Every page of a built MkDocs site (its index.html files and the 404 page)."""
    return sorted(p for p in site.rglob("*.html") if p.name in ("index.html", "404.html"))


def check_site(
    site: Path, *, width: int = 1024, timeout: float = 300.0, chromium: str | None = None
) -> list[PageReport]:
    """Load every page of `site` in Chromium at `width` pixels and measure it (see the module)."""
    binary = chromium or find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium binary found; apt-get install chromium")
    pages = site_pages(site.resolve())
    if not pages:
        raise FileNotFoundError(f"{site} holds no built pages (index.html); run `make docs`")
    with tempfile.TemporaryDirectory(prefix="boi-docs-check-") as tmp:
        harness = Path(tmp) / "harness.html"
        uris = [p.as_uri() for p in pages]
        harness.write_text(
            HARNESS
            % {
                "width": width,
                "pages": json.dumps(uris),
                "patterns": json.dumps(SOURCE_SYNTAX),
            },
            encoding="utf-8",
        )
        profile = Path(tmp) / "profile"
        profile.mkdir()
        command = [
            *headless_command(binary, profile),
            # The frame reads pages next to each other on disk (file:// is no origin otherwise).
            "--allow-file-access-from-files",
            f"--window-size={width + 40},1000",
            "--virtual-time-budget=600000",
            "--dump-dom",
            harness.as_uri(),
        ]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    match = re.search(r'<pre id="out">(.*?)</pre>', proc.stdout, re.S)
    if proc.returncode != 0 or not match or not match.group(1).strip():
        raise RuntimeError(
            f"chromium exited {proc.returncode} without measuring the pages: {proc.stderr[-2000:]}"
        )
    results = json.loads(html.unescape(match.group(1)))
    reports = []
    for page, uri in zip(pages, uris, strict=True):
        result = results.get(uri, {"error": "never loaded"})
        reports.append(
            PageReport(
                page=str(page.relative_to(site.resolve())),
                code_cells=int(result.get("cells", 0)),
                broken=list(result.get("broken", [])),
                shown=dict(result.get("shown", {})),
                error=result.get("error") or (None if result.get("loaded") else "no body"),
            )
        )
    return reports


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", type=Path, help="the built site (make docs: build/docs-site)")
    parser.add_argument("--width", type=int, default=1024, help="frame width in pixels")
    args = parser.parse_args()
    if not (args.site / "index.html").is_file():
        print(f"{args.site} holds no built site (no index.html); run `make docs`", file=sys.stderr)
        return 2
    if find_chromium() is None:
        print("no chromium binary found; apt-get install chromium", file=sys.stderr)
        return 3
    reports = check_site(args.site, width=args.width)
    problems = [line for report in reports for line in report.problems()]
    for line in problems:
        print(line)
    cells = sum(r.code_cells for r in reports)
    print(f"{len(reports)} pages, {cells} code spans in tables, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
