"""Column families: a stem, a type, at least three members."""

from __future__ import annotations

from cataloger_dagster.core.families import column_families, family_key


def test_numbered_columns_of_one_type_are_a_family():
    cols = [("artist", "string"), *((f"wk{w}", "int64") for w in range(1, 77))]
    [fam] = column_families(cols)
    assert fam.members == tuple(f"wk{w}" for w in range(1, 77)) and fam.label == "wk1…wk76"
    assert fam.stem == "wkN" and fam.described() == "wk1…wk76 (76 columns)"


def test_a_tag_letter_before_the_number_and_two_numbers_belong_to_the_stem():
    assert family_key("new_sp_m014") == family_key("new_sp_f65") == "new_sp_#"
    assert family_key("newrel_f65") == "newrel_#" != family_key("new_sp_f65")
    assert family_key("q1_2019") == family_key("q4_2020") == "#_#"
    assert family_key("wk12") == "wk#" and family_key("name") is None
    fams = column_families([(f"q{q}_{y}", "float64") for y in (2019, 2020) for q in range(1, 5)])
    assert [len(f.members) for f in fams] == [8]


def test_two_members_other_types_or_no_number_make_no_family():
    assert column_families([("address1", "string"), ("address2", "string")]) == []
    assert column_families([("x1", "int64"), ("x2", "string"), ("x3", "float64")]) == []
    assert column_families([("price", "float64"), ("cost", "float64"), ("tax", "float64")]) == []
    # nullability is no type of its own
    assert len(column_families([("x1", "!int64"), ("x2", "int64"), ("x3", "int64")])) == 1
