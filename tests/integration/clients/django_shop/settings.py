"""A Django project of the contrib apps and one app (``shop``), its database the one the
environment names (PGHOST, PGPORT, PGDATABASE, PGUSER): test_django_vs_postgres.py runs it
against the proxy and against PostgreSQL 15."""

import os

SECRET_KEY = "test"
USE_TZ = True
TIME_ZONE = "UTC"
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "shop",
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "HOST": os.environ["PGHOST"],
        "PORT": os.environ["PGPORT"],
        "NAME": os.environ["PGDATABASE"],
        "USER": os.environ.get("PGUSER", "postgres"),
        # (the proxy serves one database and has no CREATE DATABASE: Django's test runner
        # uses it as it is, with --keepdb)
        "TEST": {"NAME": os.environ["PGDATABASE"]},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
