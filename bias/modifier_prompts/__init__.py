"""Liu et al.'s paradigm (seeds 000/002): function-signature prompts with a judgmental modifier
and a demographic dimension, completed by a model and judged by the code bias classifier and the
demographic lexicon; CBS, UFS and SD per modifier and dimension (`boi bias run`), and the human
evaluation of the classifier (`boi bias human-sheet`, `boi bias human-agreement`)."""
