import dagster as dg

# One partition per table of the catalogued database; the instance knows the keys by this name.
TABLES_PARTITIONS = "tables"
tables_partitions = dg.DynamicPartitionsDefinition(name=TABLES_PARTITIONS)

# Dagster refuses these in static partition keys (its own list, not public API): the
# UI reads "..." as a range and cannot show control characters.  Dynamic keys are not
# checked, so the sensor and the runner check table names here, the same way.
INVALID_PARTITION_SUBSTRINGS = ("...", "\a", "\b", "\f", "\n", "\r", "\t", "\v", "\0")


def partition_key_problem(table: str) -> str | None:
    """Why `table` cannot be a partition key of `tables` (so is not catalogued), or None."""
    bad = [s for s in INVALID_PARTITION_SUBSTRINGS if s in table]
    if not bad:
        return None
    return (
        f"table {table!r} is not catalogued: its name contains {', '.join(map(repr, bad))}, which "
        "Dagster does not allow in a partition key; rename it or create a view with a plain name"
    )
