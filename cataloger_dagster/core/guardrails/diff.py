"""What changed between two versions of a table's suite: guardrails added, removed, and those
whose band or statement moved."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from cataloger_dagster.core.guardrails.model import GuardrailSuite, band_text


@dataclass
class SuiteDiff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # "name: low..high -> low..high" or "name: statement"

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)


def diff_suites(before: Optional[GuardrailSuite], after: GuardrailSuite) -> SuiteDiff:
    old = {g.name: g for g in (before.guardrails if before else [])}
    new = {g.name: g for g in after.guardrails}
    out = SuiteDiff(added=sorted(new.keys() - old.keys()), removed=sorted(old.keys() - new.keys()))
    for name in sorted(new.keys() & old.keys()):
        a, b = old[name], new[name]
        if (a.low, a.high) != (b.low, b.high):
            out.changed.append(f"{name}: {band_text(a.low, a.high)} -> {band_text(b.low, b.high)}")
        elif a.sql != b.sql:
            out.changed.append(f"{name}: its statement")
    return out
