"""`text.words` and `text.singular`: the one reading of names (detectors and the heuristic agent)."""

import pytest

from cataloger_dagster.core.text import singular, words


@pytest.mark.parametrize("name, expected", [
    ("customer_id", ["customer", "id"]),
    ("customerID", ["customer", "id"]),
    ("orderDate2", ["order", "date2"]),
    ("Unit Price ($)", ["unit", "price"]),
    ("e-mail.address", ["e", "mail", "address"]),
    ("prénom_client", ["prénom", "client"]),     # letters beyond ASCII stay in their word
    ("__", []),
    ("", []),
])
def test_words_split_every_way_names_are_written(name, expected):
    assert words(name) == expected


@pytest.mark.parametrize("name, expected", [
    ("categories", "category"),
    ("order_boxes", "order_box"),
    ("classes", "class"),
    ("orders", "order"),
    ("address", "address"),        # already singular
    ("Customers", "Customer"),     # the case is kept: callers compare in lower case
    ("order_items", "order_item"),
    ("data", "data"),
])
def test_singular(name, expected):
    assert singular(name) == expected
