"""assets/partitions.py: the `tables` dynamic partitions and which table names cannot be keys.

Dagster checks static partition keys but not dynamic ones, so `partition_key_problem` has to
refuse exactly what Dagster's own check refuses: these tests hold the two side by side.
"""

import dagster as dg
import pytest

from cataloger_dagster.assets.partitions import (
    INVALID_PARTITION_SUBSTRINGS,
    partition_key_problem,
    tables_partitions,
)

pytestmark = pytest.mark.filterwarnings("error::DeprecationWarning")

# names a database may well hold that Dagster takes as keys: the store escapes them, not us
ACCEPTED = ["orders", "a/b", "..", "a..b", "a b", "naïve", "a|b", "a,b", "[x]", "\x1b", "\u2028", "SELECT"]


def test_tables_is_a_dynamic_definition_named_tables():
    assert isinstance(tables_partitions, dg.DynamicPartitionsDefinition)
    assert tables_partitions.name == "tables"


@pytest.mark.parametrize("bad", INVALID_PARTITION_SUBSTRINGS, ids=repr)
def test_every_refused_substring_is_refused_by_dagster_too(bad):
    table = f"web{bad}events"
    with pytest.raises(dg.DagsterInvalidDefinitionError):
        dg.StaticPartitionsDefinition([table])
    problem = partition_key_problem(table)
    assert problem is not None
    assert repr(table) in problem and repr(bad) in problem
    assert "rename it or create a view" in problem


@pytest.mark.parametrize("name", ACCEPTED, ids=repr)
def test_names_dagster_accepts_are_not_refused(name):
    dg.StaticPartitionsDefinition([name])
    assert partition_key_problem(name) is None


def test_every_offending_substring_is_named_once_in_the_message():
    problem = partition_key_problem("a...b\tc\n")
    assert problem is not None
    for bad in ("...", "\t", "\n"):
        assert problem.count(repr(bad)) == 1
    assert repr("\r") not in problem.split("contains", 1)[1]


def test_dynamic_keys_are_not_checked_by_dagster():
    # why the check exists: the instance takes such a key and the failure would come later
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(tables_partitions.name, ["a...b"])
        assert tables_partitions.get_partition_keys(dynamic_partitions_store=instance) == ["a...b"]
