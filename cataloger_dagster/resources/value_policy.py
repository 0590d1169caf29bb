"""The sensitive-values policy as the resources hold it: the policy's name and its key, the key
given as `dg.EnvVar` (Dagster resolves it in a run; a resource used outside a run holds the
variable and reads its value here)."""

from __future__ import annotations

from typing import Optional

import dagster as dg

from cataloger_dagster.core.sensitive.masking import Policy, ValuePolicy


def key_value(key: Optional[str]) -> str:
    """The key's value ("" when none is given)."""
    if isinstance(key, dg.EnvVar):
        return key.get_value() or ""
    return key or ""


def value_policy(policy: Policy, key: Optional[str]) -> ValuePolicy:
    return ValuePolicy(policy, key_value(key))
