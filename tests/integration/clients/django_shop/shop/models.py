"""The app's models: a self-referencing foreign key, a protected one, a many-to-many,
JSON, UUID, a decimal, an index and a CHECK constraint."""

from django.db import models


class Category(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField()
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE)


class Product(models.Model):
    name = models.CharField(max_length=200, db_index=True)
    price = models.DecimalField(max_digits=10, decimal_places=2)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="products")
    tags = models.JSONField(default=list)
    created = models.DateTimeField(auto_now_add=True)
    active = models.BooleanField(default=True)
    uid = models.UUIDField(null=True)

    class Meta:
        indexes = (models.Index(fields=["price", "created"]),)
        constraints = (models.CheckConstraint(condition=models.Q(price__gte=0), name="price_nonneg"),)


class Order(models.Model):
    products = models.ManyToManyField(Product)
    note = models.TextField(blank=True)
