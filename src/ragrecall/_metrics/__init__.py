"""The metrics: a base class, the claim and attribution machinery they share, one module each."""
