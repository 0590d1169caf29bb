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


def _profile():
    from cataloger_dagster.core.models import (
        ColumnProfile, Fingerprint, SensitiveClass, TableProfile, ValueCount,
    )

    email = ColumnProfile(name="email", dtype="string", kind="string", count=2, nulls=0, null_fraction=0.0,
                          min="ada@example.org", max="bob@example.org",
                          top_values=[ValueCount(value="ada@example.org", count=2)],
                          sensitive=[SensitiveClass(name="email", share=1.0, sampled=2, matched=2)])
    lat = ColumnProfile(name="home_lat", dtype="float64", kind="float", count=2, nulls=0, null_fraction=0.0,
                        min=51.47751, max=51.50012, mean=51.48,
                        sensitive=[SensitiveClass(name="geolocation", share=1.0, sampled=2, matched=2)])
    notes = ColumnProfile(name="notes", dtype="string", kind="string", count=2, nulls=0, null_fraction=0.0,
                          top_values=[ValueCount(value="write to ada@example.org soon", count=1)],
                          sensitive=[SensitiveClass(name="email", share=0.5, sampled=2, matched=1, in_text=True)])
    plain = ColumnProfile(name="status", dtype="string", kind="string", count=2, nulls=0, null_fraction=0.0,
                          top_values=[ValueCount(value="shipped", count=2)])
    return TableProfile(database="d", table="t", row_count=2, column_count=4, columns=[email, lat, notes, plain],
                        sample_rows=[{"email": "ada@example.org", "home_lat": 51.47751,
                                      "notes": "write to ada@example.org soon", "status": "shipped"}],
                        fingerprint=Fingerprint(schema_hash="x", row_count=2, value="x"))


def test_a_profile_keeps_no_sensitive_value_under_each_policy():
    from cataloger_dagster.core.sensitive.masking import protect_profile

    for policy in ("mask", "hash", "drop"):
        safe = protect_profile(_profile(), policy)
        text = safe.model_dump_json()
        assert "ada@example.org" not in text and "bob@example.org" not in text and "51.47751" not in text
        email, lat, notes, plain = safe.columns
        assert plain.top_values[0].value == "shipped" and safe.sample_rows[0]["status"] == "shipped"
        assert lat.min is None and lat.mean is None and email.sensitive[0].name == "email"
        assert notes.top_values[0].value.startswith("write to ")  # the prose still reads
    masked = protect_profile(_profile(), "mask")
    assert masked.columns[0].top_values[0].value == "xxx@xxxxxxx.xxx"
    assert protect_profile(_profile(), "drop").columns[0].top_values is None
    assert protect_profile(_profile(), "hash").columns[0].top_values[0].value.startswith("#")
