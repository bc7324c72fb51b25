"""Being built (issue 25): see perturb/recode/__init__.py."""
