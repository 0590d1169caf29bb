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


def test_hash_is_an_hmac_no_dictionary_finds_back_without_the_key():
    import hashlib
    import hmac

    value, key = "ada@example.org", "catalog-secret"
    shown = protect(value, "hash", key)
    # the digest of the value under the key, and none of the value without it (an unkeyed digest
    # of each likely value, the dictionary attack, never meets it)
    assert shown == "#" + hmac.new(key.encode(), value.encode(), hashlib.sha256).hexdigest()[:16]
    assert shown not in {"#" + hashlib.sha256(v.encode()).hexdigest()[:16] for v in (value, value.upper())}
    assert shown not in {protect(value, "hash", k) for k in ("", "catalog-secreT", "k")}


def test_a_policy_scrubs_known_values_and_self_proving_ones_from_text():
    from cataloger_dagster.core.sensitive.masking import KnownValues, ValuePolicy

    known = KnownValues(["Marguerite Duras", "Jean-Luc Picard", "Li"])  # "Li" is too short to hunt
    note = "Marguerite Duras called; cc jean-luc picard, mail ada@example.org. Marguerite Durasx is no one; Li left."
    masked = ValuePolicy("mask", known=known).text(note)
    assert masked == ("Xxxxxxxxxx Xxxxx called; cc xxxx-xxx xxxxxx, mail xxx@xxxxxxx.xxx. "
                      "Marguerite Durasx is no one; Li left.")
    hashed = ValuePolicy("hash", "k", known).text(note)
    assert "Marguerite Duras " not in hashed and "picard" not in hashed and "ada@" not in hashed
    assert protect("Marguerite Duras", "hash", "k") in hashed  # the same digest as the column's
    dropped = ValuePolicy("drop", known=known).text(note)
    assert dropped == " called; cc , mail . Marguerite Durasx is no one; Li left."


def test_a_policy_covers_nested_values_and_models_alike():
    from cataloger_dagster.core.models import ValueCount
    from cataloger_dagster.core.sensitive.masking import KnownValues, ValuePolicy

    policy = ValuePolicy("mask", known=KnownValues(["Ada Lovelace"]))
    data = {"Ada Lovelace": ["ada@example.org", ("Ada Lovelace", 3)], "n": 2}
    assert policy.value(data) == {"Xxx Xxxxxxxx": ["xxx@xxxxxxx.xxx", ("Xxx Xxxxxxxx", 3)], "n": 2}
    model = policy.object(ValueCount(value="Ada Lovelace", count=1))
    assert isinstance(model, ValueCount) and model.value == "Xxx Xxxxxxxx" and model.count == 1


def test_remembered_values_are_those_of_wholly_sensitive_columns():
    from cataloger_dagster.core.sensitive.masking import ValuePolicy, remember, whole_values

    profile = _profile()
    found = whole_values(profile)
    assert "ada@example.org" in found and "shipped" not in found
    assert not any("write to" in v for v in found)  # a note holding an e-mail is not a value to hunt
    remember(["Zebulon Quartermain"])
    assert ValuePolicy().text("ask Zebulon Quartermain") == "ask Xxxxxxx Xxxxxxxxxxx"
