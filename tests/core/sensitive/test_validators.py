"""Each validator accepts its class's real shapes and refuses look-alikes a pattern alone would take."""

from __future__ import annotations

import datetime as dt

from cataloger_dagster.core.sensitive import validators as v


def test_payment_card_needs_the_luhn_check_and_a_network_prefix():
    assert v.payment_card("4111 1111 1111 1111") and v.payment_card("5500-0000-0000-0004")
    assert not v.payment_card("4111 1111 1111 1112")  # one digit off: Luhn fails
    assert not v.payment_card("9111111111111110")  # passes Luhn, but no card network issues 9...


def test_email_phone_iban_ip_mac():
    assert v.email("ada.lovelace@example.org") and not v.email("ada@") and not v.email("a b@example.org")
    assert v.phone("+44 20 7946 0958") and v.phone("(212) 555-0199") and not v.phone("2024-01-05")
    assert v.iban_number("GB82 WEST 1234 5698 7654 32") and not v.iban_number("GB82 WEST 1234 5698 7654 33")
    assert v.ip_address("192.168.1.20") and v.ip_address("2001:db8::1") and not v.ip_address("1.2.3")
    assert v.mac_address("00:1A:2b:3C:4d:5E") and not v.mac_address("00:1A:2b:3C:4d")


def test_national_ids_follow_their_rules():
    assert v.uk_nino("AB 12 34 56 C") and not v.uk_nino("ZZ 12 34 56 C") and not v.uk_nino("AB 12 34 56 E")
    assert v.national_id("536-90-4399") and v.national_id("RSSMRA85T10A562S") and v.national_id("12345678Z")
    assert not v.national_id("RSSMRA85T10A562X")  # the codice fiscale's check letter is S


def test_date_of_birth_is_within_a_lifetime():
    today = dt.date(2026, 11, 27)
    assert v.date_of_birth("1980-02-29", today) and v.date_of_birth(dt.date(2001, 1, 1), today)
    assert not v.date_of_birth("2030-01-01", today) and not v.date_of_birth("1850-01-01", today)


def test_coordinates_need_three_decimals_and_their_bound():
    assert v.coordinate(51.47751, 90) and v.coordinate("-0.12345", 180)
    assert not v.coordinate(51.5, 90) and not v.coordinate(123.4567, 90)


def test_secrets_of_published_formats_and_credentials():
    assert v.known_secret("AKIAIOSFODNN7EXAMPLE") and v.known_secret("ghp_" + "a1" * 18)
    assert not v.known_secret("hello world")
    assert v.credential("hunter2!") and not v.credential("two words")


def test_a_filler_of_one_or_two_digits_is_no_phone_number():
    from cataloger_dagster.core.sensitive.masking import scrub
    from cataloger_dagster.core.sensitive.validators import phone

    assert not phone("0000-00-00 00") and not phone("555-5555") and not phone("+1 000 000 0000")
    code = "TYPED_PLACEHOLDERS = ('none', '0000-00-00', '0000-00-00 00:00:00', '00/00/0000')"
    assert scrub(code) == code


def test_an_ip_address_or_network_is_no_phone_number_but_a_number_written_with_dots_is():
    from cataloger_dagster.core.sensitive.validators import phone, phone_shaped

    for address in ("10.0.0.123", "192.168.10.254", "10.0.0.0/24", "172.16.254.1/32"):
        assert not phone(address) and not phone_shaped(address), address
    # a Belgian and a French number, and a US one, written with dots: not addresses
    assert phone("02.123.45.67") and phone("01.23.45.67.89") and phone("212.555.0199")
