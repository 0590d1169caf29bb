"""Guardrails: what the catalog learned of a table, as plain SQL assertions that run without the
agent or the sandbox.

A suite holds one assertion per expectation, each a single SELECT in the source's own dialect that
returns one number (`measured`), with the band that number must stay in and why it exists: the
finding it guards (confirmed by an investigation or accepted by a reviewer) or the profile fact it
pins.  `model` defines the suite, `build` writes it from a run's results, `queries` turns each
expectation into SQL through ibis, `run` runs a suite and `diff` compares two versions of it.
"""
