"""Judge plumbing: the step driver (retries, deadlines), structured replies, judge resolution."""
