"""User-facing errors.

A `UserError` is bad input the user can fix (a missing file, a malformed line, an unknown name).
The CLI prints its message as one sentence and exits non-zero, without a traceback; anything
else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(Exception):
    """Bad input, explained in one sentence that says what to do."""


def suggest(name: str, choices: Iterable[str]) -> str:
    """' (did you mean X?)' for the closest of `choices`, or '' when nothing is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def require_text(value: str, what: str) -> str:
    """`value` itself when it is valid text, else a UserError naming it (`what`: "the argument",
    "config.out_dir").

    A file name that is not UTF-8 (a Latin-1 archive's) reaches Python with its bytes as lone
    surrogates: it opens, but boi writes the names it is given into its records and reports as
    text (a dataset's label, the run's command and out_dir, the HTML report), and no UTF-8
    file can hold it. Refused where it enters, so the run stops before writing anything."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        try:  # the bytes as the file system holds them, shown as \xff
            raw = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate no file name decodes to
            raw = value.encode("utf-8", "backslashreplace")
        shown = raw.decode("utf-8", "backslashreplace")
        raise UserError(
            f"{what} '{shown}' is not valid UTF-8, and boi writes the names it is given into "
            "its records and reports as text; rename the file or folder to a UTF-8 name (e.g. "
            "`convmv -f latin1 -t utf-8 --notest NAME`) or pass a link that has one."
        ) from None
    return value
