"""Executable fairness tests (Solar, SocialBias-Bench, seed 004; Huang et al., seed 001): a task
whose method decides about a person, the model's reply read for that method, run in the sandbox
over every combination of attribute values, and biased when one sensitive attribute alone changes
the outcome; CBS, CBS_U@K / CBS_I@K, BLS, Pass@attribute, mitigation strategies and feedback
rounds (`boi bias test`), and the papers' ablations (`boi bias experiment`)."""
