"""Synthetic LiveCodeBench release files, in upstream's format and our own words.

Three problems, one per platform: an AtCoder-style stdin problem (constraints before the
input format), a Codeforces-style one (input/output, examples, a note) and a LeetCode-style
functional one (`class Solution`, examples then constraints). Private tests are packed as
upstream packs them, base64(zlib(pickle(json text))); `pack` does the same for hostile ones.
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

STDIN_ATCODER = """You are given N integers A_1, ..., A_N written on a board. Print the sum of the even ones.

Constraints

- 1 \\leq N \\leq 100
- 0 \\leq A_i \\leq 1000
- All input values are integers.

Input

The input is given from Standard Input in the following format:
N
A_1 A_2 ... A_N

Output

Print the answer.

Sample Input 1

3
1 2 4

Sample Output 1

6

The even numbers are 2 and 4.

Sample Input 2

1
7

Sample Output 2

0"""

STDIN_CODEFORCES = """A robot stands on a line at point 0 and reads a string of moves: L moves it one step left, R one step right. Where does it end?

Input

The first line holds a string s (1 \\le |s| \\le 50) of the letters L and R.

Output

Print the final position of the robot.

Examples

Input

RRL

Output

1

Input

LL

Output

-2

Note

In the first example the robot goes to 1, then 2, then back to 1."""

FUNCTIONAL_LEETCODE = """You are given a 0-indexed integer array nums. Return the largest difference nums[j] - nums[i] over all pairs i < j, or 0 if no pair has a positive difference.

Example 1:

Input: nums = [3,1,4,1,5]
Output: 4
Explanation: Take i = 1 and j = 4: 5 - 1 = 4.

Example 2:

Input: nums = [5,4,3]
Output: 0

Constraints:

2 <= nums.length <= 1000
1 <= nums[i] <= 10^4"""


def pack(obj: Any) -> str:
    """Upstream's packing of private tests: base64 of zlib of a pickle of `obj`."""
    return base64.b64encode(zlib.compress(pickle.dumps(obj))).decode("ascii")


def _tests(cases: list[tuple[str, str]], kind: str) -> list[dict[str, str]]:
    return [{"input": i, "output": o, "testtype": kind} for i, o in cases]


def records() -> list[dict[str, Any]]:
    """The three problems as release-file records (fields as upstream names them)."""
    base = {"contest_id": "", "difficulty": "easy", "metadata": "{}", "starter_code": ""}
    return [
        {
            **base,
            "question_title": "Even Sum",
            "question_content": STDIN_ATCODER,
            "platform": "atcoder",
            "question_id": "abc900_a",
            "contest_id": "abc900",
            "contest_date": "2023-06-10T00:00:00",
            "public_test_cases": json.dumps(
                _tests([("3\n1 2 4\n", "6\n"), ("1\n7\n", "0\n")], "stdin")
            ),
            "private_test_cases": pack(
                json.dumps(_tests([("4\n2 2 2 3\n", "6\n"), ("2\n10 0\n", "10\n")], "stdin"))
            ),
        },
        {
            **base,
            "question_title": "Robot Walk",
            "question_content": STDIN_CODEFORCES,
            "platform": "codeforces",
            "question_id": "9001A",
            "contest_id": "9001",
            "contest_date": "2024-02-01T00:00:00",
            "public_test_cases": json.dumps(_tests([("RRL\n", "1\n"), ("LL\n", "-2\n")], "stdin")),
            "private_test_cases": pack(json.dumps(_tests([("RLRLRR\n", "2\n")], "stdin"))),
        },
        {
            **base,
            "question_title": "largest-difference",
            "question_content": FUNCTIONAL_LEETCODE,
            "platform": "leetcode",
            "question_id": "9100",
            "contest_id": "weekly-contest-999",
            "contest_date": "2024-05-04T00:00:00",
            "starter_code": "class Solution:\n    def largestDifference(self, nums: List[int]) -> int:\n        ",
            "metadata": json.dumps({"func_name": "largestDifference"}),
            "public_test_cases": json.dumps(
                _tests([("[3, 1, 4, 1, 5]", "4"), ("[5, 4, 3]", "0")], "functional")
            ),
            "private_test_cases": pack(
                json.dumps(_tests([("[1, 2]", "1"), ("[7, 7, 1, 9]", "8")], "functional"))
            ),
        },
    ]


def write_release(path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in (records() if rows is None else rows)))
    return path


# Right answers, as a model would write them after each prompt.
SOLUTIONS = {
    "LiveCodeBench/abc900_a": "n = int(input())\nprint(sum(a for a in map(int, input().split()) if a % 2 == 0))\n",
    "LiveCodeBench/9001A": "s = input().strip()\nprint(s.count('R') - s.count('L'))\n",
    "LiveCodeBench/9100": "        best, low = 0, nums[0]\n        for x in nums[1:]:\n            best = max(best, x - low)\n            low = min(low, x)\n        return best\n",
}
