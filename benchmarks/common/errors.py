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
