"""The LM critic: how plausible a perturbed prompt is, compared with its original.

scoring     prompt log-probabilities; the scorers (`SCORERS`: hf, endpoint) and `load_scorer`
similarity  similarity of a variant to its original, and the plausibility gate
annotate    `boi critic FILE`: scores and verdicts added to every record of a perturb file
spec        `CriticSpec`: the critic block of a run's config (scorer, gate threshold, measure)
score_cache `CriticScores`: critic summaries by prompt, kept on disk (a `KeyedLog`)
table2      the paper's Table 2 protocol
"""
