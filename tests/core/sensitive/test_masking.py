from __future__ import annotations

from cataloger_dagster.core.sensitive.masking import protect, shape


def test_mask_keeps_the_shape_and_never_a_letter_or_digit():
    assert shape("Ada.Lovelace@example.org") == "Xxx.Xxxxxxxx@xxxxxxx.xxx"
    assert protect("4111 1111 1111 1111") == "9999 9999 9999 9999"
    assert protect(None) is None


def test_hash_is_stable_keyed_and_hides_the_value():
    a, b = protect("ada@example.org", "hash"), protect("ada@example.org", "hash")
    assert a == b and a.startswith("#") and "ada" not in a
    assert protect("ada@example.org", "hash", key="k") != a


def test_drop_leaves_nothing():
    assert protect("ada@example.org", "drop") is None
