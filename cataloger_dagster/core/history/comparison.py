"""The comparison of two runs' numbers: what moved, and which moves deserve a reader's attention.

One piece of code for both sides of the recent summary: `recent_changes.compare_runs` imports it,
and every summary_script.py carries its code (the part below `CARRIED_FROM`) verbatim, so that
the script a user runs by hand judges a change exactly as the catalog did.  That is why it uses
nothing but the language itself: no import, no name of this package.
"""

from __future__ import annotations

__all__ = [
    "CARRIED_FROM",
    "NULL_FRACTION_POINTS",
    "MEAN_STDS",
    "DISTINCT_RATIO",
    "rows_change",
    "schema_change",
    "null_fraction_notable",
    "mean_move",
    "distinct_notable",
]

CARRIED_FROM = "# --- every summary_script.py carries the code below, as it is ---\n"

# --- every summary_script.py carries the code below, as it is ---
# A distribution shift worth a reader's attention (flagged `notable`).
NULL_FRACTION_POINTS = 0.05  # null fraction moved by 5 percentage points or more
MEAN_STDS = 1.0  # mean moved by more than one (previous) standard deviation
DISTINCT_RATIO = 0.2  # distinct values per row changed by more than 20%


def rows_change(before: int, after: int) -> tuple[int, float | None]:
    """The change of a row count, and that change in percent (None from an empty table)."""
    delta = after - before
    return delta, (round(delta / before * 100, 2) if before else None)


def schema_change(
    before: dict[str, str], after: dict[str, str]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str, str]]]:
    """From two runs' {column: type}, in the runs' column order: (column, type) of the columns
    added and of those removed, and (column, type before, type after) of those retyped."""
    added = [(name, dtype) for name, dtype in after.items() if name not in before]
    removed = [(name, dtype) for name, dtype in before.items() if name not in after]
    retyped = [(name, before[name], dtype) for name, dtype in after.items() if name in before and before[name] != dtype]
    return added, removed, retyped


def null_fraction_notable(before: float, after: float) -> bool:
    # 25% -> 30% is five points, though float subtraction puts it a hair under 0.05
    return abs(after - before) >= NULL_FRACTION_POINTS - 1e-12


def mean_move(before: float, after: float, std: float | None) -> str | None:
    """Why a mean's move deserves attention: "std" when it moved more than MEAN_STDS of the earlier
    standard deviation, "constant" when the column was constant before; None when it does not."""
    if before == after:
        return None
    if std is not None and std > 0 and abs(after - before) > MEAN_STDS * std:
        return "std"
    if std == 0:
        return "constant"
    return None


def distinct_notable(before: float, after: float, rows: tuple[int, int]) -> bool:
    """Whether the distinct count moved by more than DISTINCT_RATIO, relative to the row count of
    each run (a key column growing with its table is no news); `before` must not be 0."""
    share_before, share_after = (before / rows[0], after / rows[1]) if all(rows) else (before, after)
    return abs(share_after - share_before) / share_before > DISTINCT_RATIO
