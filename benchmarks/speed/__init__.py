"""Time and memory: the judge, the runners, the install."""
