"""Time settings read and shown as PostgreSQL reads and shows them (GUC_UNIT_MS): held in
milliseconds, as pg_settings.setting has them, shown by SHOW in the largest unit that
divides them."""

from __future__ import annotations

import pytest

from decoding.errors import PgError
from walsender_proxy.backend.settings import Settings
from walsender_proxy.sql.pgcatalog import shown_setting


@pytest.mark.parametrize(
    ("given", "shown", "ms"),
    [
        ("0", "0", 0),
        ("5000", "5s", 5000),
        ("1500", "1500ms", 1500),
        ("5s", "5s", 5000),
        (" 250 ms ", "250ms", 250),
        ("60s", "1min", 60_000),
        ("90min", "90min", 5_400_000),
        ("2h", "2h", 7_200_000),
        ("1d", "1d", 86_400_000),
        ("1.5s", "1500ms", 1500),
        ("2000us", "2ms", 2),
    ],
)
def test_time_settings_take_units_and_show_the_largest_that_divides(given: str, shown: str, ms: int) -> None:
    s = Settings({"is_superuser": "on"})  # (deadlock_timeout is a superuser's, as in PostgreSQL)
    for name in ("lock_timeout", "statement_timeout", "deadlock_timeout", "idle_in_transaction_session_timeout"):
        if name == "deadlock_timeout" and ms == 0:
            continue  # (at least 1 ms, as in PostgreSQL)
        s.set(name, given)
        assert s.get(name) == str(ms)
        assert shown_setting(name, s.get(name)) == shown
        assert s.number(name) == ms


@pytest.mark.parametrize("bad", ["abc", "5 parsecs", "-1", "3000000000"])
def test_a_bad_time_setting_is_refused_with_22023(bad: str) -> None:
    with pytest.raises(PgError) as e:
        Settings().set("lock_timeout", bad)
    assert e.value.sqlstate == "22023"


def test_deadlock_and_wal_sender_timeouts_default_as_in_postgresql() -> None:
    s = Settings()
    assert shown_setting("deadlock_timeout", s.get("deadlock_timeout")) == "1s"
    assert shown_setting("wal_sender_timeout", s.get("wal_sender_timeout")) == "1min"


def test_superuser_settings_need_a_superuser_and_backend_ones_the_start() -> None:
    """PostgreSQL's contexts: a superuser setting is 42501 for others (at start-up too); a
    backend setting can be given only at start-up (55P02 later)."""
    plain = Settings()
    for name in ("log_statement", "log_min_error_statement", "deadlock_timeout", "lc_messages"):
        with pytest.raises(PgError) as ei:
            plain.set(name, plain.get(name))
        assert (ei.value.sqlstate, ei.value.message) == ("42501", f'permission denied to set parameter "{name}"')
    with pytest.raises(PgError, match="permission denied"):
        plain.set("log_connections", "on", startup=True)
    su = Settings({"is_superuser": "on"})
    su.set("log_statement", "MOD")
    assert su.get("log_statement") == "mod"
    su.set("log_connections", "on", startup=True)
    with pytest.raises(PgError) as ei:
        su.set("log_connections", "off")
    assert (ei.value.sqlstate, ei.value.message) == ("55P02", 'parameter "log_connections" cannot be set after connection start')
    with pytest.raises(PgError) as ei:
        su.set("log_line_prefix", "%p")
    assert ei.value.sqlstate == "55P02"


def test_reset_all_resets_user_and_superuser_settings_for_anyone() -> None:
    """ResetAllOptions: no permission check, backend settings (given at start-up) stay."""
    su = Settings({"is_superuser": "on"})
    su.set("log_connections", "on", startup=True)
    su.set("log_statement", "all")
    su.set("application_name", "x")
    assert su.reset_all() == ["application_name"]
    assert (su.get("log_statement"), su.get("application_name"), su.get("log_connections")) == ("none", "", "on")


@pytest.mark.parametrize(
    ("name", "value"),
    [("DateStyle", "Postgres"), ("DateStyle", "SQL, DMY"), ("DateStyle", "German")],
)
def test_settings_the_proxy_would_ignore_are_refused(name: str, value: str) -> None:
    """Values PostgreSQL honours and the proxy could only accept and ignore (dates printed
    in another style) are refused instead of silently
    ignored."""
    with pytest.raises(PgError) as e:
        Settings().set(name, value)
    assert e.value.sqlstate == "0A000"


def test_datestyle_in_either_order_and_more_float_digits_are_kept() -> None:
    s = Settings()
    s.set("DateStyle", "MDY, ISO")
    s.set("extra_float_digits", "3")
    assert (s.get("DateStyle"), s.get("extra_float_digits")) == ("ISO, MDY", "3")


def test_datestyle_keeps_what_a_value_does_not_name_and_gives_the_field_order() -> None:
    """check_datestyle: an order alone keeps the ISO output style, a style alone keeps the
    order, RESET goes back to the session's start; the order is what date input reads."""
    s = Settings()
    seen = []
    for value in ("DMY", "ISO", "ymd", "Euro", "US", "NonEuropean", "", '"iso"', "default, YMD", None):
        changed = s.set("DateStyle", value)
        seen.append((s.get("DateStyle"), s.date_order(), changed))
    assert seen == [
        ("ISO, DMY", "DMY", True), ("ISO, DMY", "DMY", False), ("ISO, YMD", "YMD", True), ("ISO, DMY", "DMY", True),
        ("ISO, MDY", "MDY", True), ("ISO, MDY", "MDY", False), ("ISO, MDY", "MDY", False), ("ISO, MDY", "MDY", False),
        ("ISO, YMD", "YMD", True), ("ISO, MDY", "MDY", True),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("ISO, DMY, MDY", 'Conflicting "datestyle" specifications.'),
        ("ISO, German", 'Conflicting "datestyle" specifications.'),
        ("foo", 'Unrecognized key word: "foo".'),
        ("ISO,", "List syntax is invalid."),
        ("ISO DMY", "List syntax is invalid."),
    ],
)
def test_datestyle_refusals_are_worded_as_postgresql(value: str, detail: str) -> None:
    with pytest.raises(PgError) as e:
        Settings().set("DateStyle", value)
    assert (e.value.sqlstate, e.value.message, e.value.detail) == (
        "22023", f'invalid value for parameter "DateStyle": "{value}"', detail
    )
@pytest.mark.parametrize(("value", "kept"), [("0", "0"), ("-15", "-15"), ("-3", "-3")])
def test_fewer_float_digits_are_kept_as_postgresql_keeps_them(value: str, kept: str) -> None:
    s = Settings()
    s.set("extra_float_digits", value)
    assert s.get("extra_float_digits") == kept


def test_float_digits_outside_postgresqls_range_are_refused_in_its_words() -> None:
    with pytest.raises(PgError) as e:
        Settings().set("extra_float_digits", "-16")
    assert (e.value.sqlstate, e.value.message) == (
        "22023", '-16 is outside the valid range for parameter "extra_float_digits" (-15 .. 3)'
    )

