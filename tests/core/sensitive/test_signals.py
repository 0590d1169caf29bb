from __future__ import annotations

from cataloger_dagster.core.sensitive.signals import about_people, bare_name, name_classes


def test_a_columns_name_points_at_classes():
    assert name_classes("customerEmail") == {"email"} and name_classes("date_of_birth") == {"date_of_birth"}
    assert name_classes("IPAddress") == {"ip_address"} and name_classes("home_lat") == {"geolocation"}
    assert name_classes("order_id") == set() and name_classes("capacity") == set()


def test_a_bare_name_is_a_persons_only_among_people():
    assert bare_name("name") and bare_name("display_name") and not bare_name("product_name")
    assert about_people(["customer_id", "email"]) and about_people([], "patients")
    assert not about_people(["iata", "runway"], "airports")
