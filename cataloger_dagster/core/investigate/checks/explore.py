"""The explore block's code: a look at the data before testing (cold runs), printing the
table's schema and the most frequent values of up to three of the issue's columns.  The block's
head (`_issue` and `_columns`, as literals) is written by core/investigate/code.py."""

from typing import TYPE_CHECKING

import ibis

if TYPE_CHECKING:  # defined by the setup block, and literals the block's head writes
    from cataloger_dagster.core.investigate.checks.session import _columns, rows_of, t

# --- the block sent to the sandbox starts here ---
print(t.schema())
for _column in _columns:
    _top: object = f"(its values cannot be shown: {t.schema()[_column]})"
    # as itself, else as its text (PostgreSQL cannot group a point or json; SQLite's text of
    # a blob may not be UTF-8): what is printed only helps the reader
    for _values in (t[_column], t[_column].cast("string").name(_column)):
        try:
            _top = rows_of(_values.value_counts().order_by(ibis.desc(_column + "_count")), 10)
            break
        except Exception:
            continue
    print(_column, _top)
