"""`comparison`: the judgements both compare_runs and every summary script make, at their edges, and
the part the scripts carry, which must need nothing but the language."""

from __future__ import annotations

import ast
from pathlib import Path

from cataloger_dagster.core.history import comparison
from cataloger_dagster.core.history.comparison import (
    distinct_notable, mean_move, null_fraction_notable, rows_change, schema_change,
)


def test_rows_change_in_rows_and_percent():
    assert rows_change(200, 150) == (-50, -25.0)
    assert rows_change(3, 4) == (1, 33.33)
    assert rows_change(0, 10) == (10, None)        # from an empty table there is no percentage


def test_schema_change_keeps_the_runs_column_order():
    before = {"id": "int64", "gone": "string", "code": "int64", "left": "date"}
    after = {"new": "float64", "id": "int64", "code": "string", "later": "!int8"}
    assert schema_change(before, after) == (
        [("new", "float64"), ("later", "!int8")],
        [("gone", "string"), ("left", "date")],
        [("code", "int64", "string")],
    )
    assert schema_change(after, after) == ([], [], [])


def test_five_points_of_nulls_are_notable_whatever_float_subtraction_makes_of_them():
    assert 0.30 - 0.25 < 0.05
    assert null_fraction_notable(0.25, 0.30) and null_fraction_notable(0.30, 0.25)
    assert not null_fraction_notable(0.25, 0.2999)


def test_a_mean_is_notable_beyond_one_earlier_std_or_when_a_constant_column_moves():
    assert mean_move(50.0, 61.0, 10.0) == "std"
    assert mean_move(50.0, 60.0, 10.0) is None      # exactly one std is not beyond it
    assert mean_move(5.0, 5.5, 0.0) == "constant"
    assert mean_move(5.0, 5.0, 0.0) is None          # a constant column that stayed so
    assert mean_move(50.0, 900.0, None) is None      # no spread known: nothing to judge by


def test_distinct_counts_are_judged_per_row():
    assert not distinct_notable(100, 200, (100, 200))    # a key growing with its table
    assert distinct_notable(100, 100, (100, 200))        # a key that stopped being one
    assert distinct_notable(10, 13, (0, 0)) and not distinct_notable(10, 12, (0, 0))


def carried_part() -> str:
    source = Path(comparison.__file__).read_text(encoding="utf-8")
    head, marker, carried = source.partition("\n" + comparison.CARRIED_FROM)
    assert marker, "comparison.py lost the line that starts the part the scripts carry"
    return carried


def test_the_part_the_scripts_carry_imports_nothing_and_defines_the_judgements():
    tree = ast.parse(carried_part())
    assert not [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    defined |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    public = set(comparison.__all__) - {"CARRIED_FROM"}
    assert defined == public


def test_the_carried_part_runs_on_its_own():
    scope: dict = {}
    exec(compile(carried_part(), "carried", "exec"), scope)
    assert scope["mean_move"](5.0, 5.5, 0.0) == "constant"
    assert scope["rows_change"](200, 150) == (-50, -25.0)
