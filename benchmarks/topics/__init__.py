"""Benchmark topics: each module defines ``cases(frameworks) -> list[Case]``; run.py finds them
all, so a new topic is a new module here."""
