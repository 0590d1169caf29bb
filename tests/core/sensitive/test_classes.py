from __future__ import annotations

from cataloger_dagster.core.sensitive.classes import BY_KEY, CLASSES, KEYS, label


def test_one_list_of_at_least_fifteen_classes_with_unique_keys():
    assert len(CLASSES) >= 15 and len(KEYS) == len(CLASSES)
    assert label("payment_card") == "payment card" and label("unknown") == "unknown"
    assert not BY_KEY["secret"].personal and BY_KEY["email"].personal


def test_column_tags_mark_personal_data_and_each_class():
    from cataloger_dagster.core.sensitive.classes import column_tags

    assert column_tags([]) == {}
    assert column_tags(["email"]) == {"pii": "", "sensitive/email": ""}
    assert column_tags(["secret"]) == {"sensitive/secret": ""}  # a credential is no person's data
