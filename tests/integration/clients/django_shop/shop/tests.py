"""A test of the app, run by Django's own test runner against the proxy: TestCase wraps
each test in a transaction and its savepoints, rolled back after it."""

from django.db import IntegrityError, transaction
from django.test import TestCase

from shop.models import Category


class CategoryTests(TestCase):
    def test_create_and_unique(self) -> None:
        before = Category.objects.count()
        Category.objects.create(name="only-in-this-test", slug="x")
        self.assertEqual(Category.objects.count(), before + 1)
        with self.assertRaises(IntegrityError), transaction.atomic():
            Category.objects.create(name="only-in-this-test", slug="y")
        self.assertEqual(Category.objects.filter(name="only-in-this-test").count(), 1)

    def test_rolled_back_between_tests(self) -> None:
        self.assertFalse(Category.objects.filter(name="only-in-this-test").exists())
