"""Render a report.html in headless Chromium and save a PNG screenshot (to look at it).

    python scripts/render_report.py runs/x/report/report.html --out shot.png [--expand]

`--expand` renders a copy with every <details> open, to check the per-problem panels. Exits 3
when no Chromium binary is found (install the Debian package `chromium`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The first Chromium-like binary on PATH (or $CHROMIUM), or None."""
    explicit = os.environ.get("CHROMIUM")
    if explicit:
        return shutil.which(explicit) or (explicit if Path(explicit).exists() else None)
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    return None


def headless_command(binary: str, profile: Path) -> list[str]:
    """Headless Chromium, offline and quiet, with its profile in `profile` (add the page and
    what to do with it: --screenshot, --dump-dom)."""
    return [
        binary,
        "--headless",
        # Sessions and CI run as root, where Chromium refuses its sandbox.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ]


def render(
    html_path: Path,
    png_path: Path,
    *,
    width: int = 1400,
    height: int = 2400,
    expand: bool = False,
    timeout: float = 120.0,
    chromium: str | None = None,
) -> Path:
    """Screenshot `html_path` at width x height into `png_path`; raises on failure."""
    binary = chromium or find_chromium()
    if binary is None:
        raise FileNotFoundError("no chromium binary found; apt-get install chromium")
    html_path = html_path.resolve()
    png_path = png_path.resolve()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="boi-chromium-") as tmp:
        page = html_path
        if expand:
            page = Path(tmp) / "expanded.html"
            page.write_text(
                html_path.read_text(encoding="utf-8").replace("<details", "<details open"),
                encoding="utf-8",
            )
        profile = Path(tmp) / "profile"
        profile.mkdir()
        command = [
            *headless_command(binary, profile),
            f"--screenshot={png_path}",
            f"--window-size={width},{height}",
            page.as_uri(),
        ]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not png_path.exists():
        raise RuntimeError(
            f"chromium exited {proc.returncode} without a screenshot: {proc.stderr[-2000:]}"
        )
    return png_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html", type=Path, help="the report.html to render")
    parser.add_argument("--out", type=Path, required=True, help="PNG screenshot to write")
    parser.add_argument("--width", type=int, default=1400)
    parser.add_argument("--height", type=int, default=2400)
    parser.add_argument("--expand", action="store_true", help="open every <details> first")
    args = parser.parse_args()
    if not args.html.is_file():
        print(f"{args.html} does not exist", file=sys.stderr)
        return 2
    if find_chromium() is None:
        print("no chromium binary found; apt-get install chromium", file=sys.stderr)
        return 3
    out = render(args.html, args.out, width=args.width, height=args.height, expand=args.expand)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
