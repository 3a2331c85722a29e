"""The benchmarks: each script runs as ``python -m benchmarks.<group>.<name>`` from the
repository root (see README.md)."""
