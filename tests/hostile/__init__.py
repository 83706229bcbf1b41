"""docs/errors.md's promises under hostile input: the rounds of cases and how each is judged."""
