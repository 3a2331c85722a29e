"""Prompt injection: attacks that become false support, honest support withheld."""
