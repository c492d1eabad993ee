"""Ordinary ORM work on the migrated database, one line per step: the step's name and its
answer (or the error's class and message), printed so that two servers' runs compare
line by line. Nothing time-dependent is printed."""

import decimal
import json
import os
import uuid

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django

django.setup()

from django.contrib.auth.models import Group, Permission, User  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Avg, Count, Exists, F, Max, OuterRef, Q, Subquery, Sum, Value  # noqa: E402
from django.db.models.functions import Coalesce, Length, Lower, TruncMonth  # noqa: E402
from shop.models import Category, Order, Product  # noqa: E402


def _plain(v: object) -> object:
    if isinstance(v, set | frozenset):
        return sorted(_plain(x) for x in v)  # type: ignore[type-var]
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, decimal.Decimal | uuid.UUID):
        return str(v)
    if isinstance(v, int | float | str | bool) or v is None:
        return v
    return repr(v)


def step(name: str, fn: object) -> None:
    try:
        out = {"step": name, "ok": _plain(fn())}  # type: ignore[operator]
    except Exception as e:  # (the error is the answer to compare)
        out = {"step": name, "error": type(e).__name__, "message": str(e).splitlines()[0]}
    print(json.dumps(out, sort_keys=True), flush=True)


def savepoints() -> int:
    try:
        with transaction.atomic():
            Category.objects.create(name="tx", slug="tx")
            with transaction.atomic():
                Category.objects.create(name="tx2", slug="tx2")
                raise ValueError
    except ValueError:
        pass
    with transaction.atomic():
        Category.objects.create(name="kept", slug="k")
        try:
            with transaction.atomic():
                Category.objects.create(name="kept", slug="dup")  # (unique name: rolled back alone)
        except django.db.IntegrityError:
            pass
    return Category.objects.filter(name__in=["tx", "tx2", "kept"]).count()


def products() -> int:
    cats = {c.name: c for c in Category.objects.all()}
    rows = [
        Product(name=f"p{i}", price=decimal.Decimal(i) + decimal.Decimal("0.5"), category=cats[f"c{i % 3}"], tags=["t", i],
                uid=uuid.UUID(int=i) if i % 2 else None)
        for i in range(10)
    ]  # fmt: skip
    return len(Product.objects.bulk_create(rows))


step("create user", lambda: User.objects.create_user("alice", "a@example.com", "pw").username)
step("check password", lambda: User.objects.get(username="alice").check_password("pw"))
step("group perms", lambda: Group.objects.create(name="g1").permissions.add(*Permission.objects.filter(codename__startswith="add_")))
step("user groups", lambda: User.objects.get(username="alice").groups.add(Group.objects.get(name="g1")))
step("permissions", lambda: User.objects.get(username="alice").get_all_permissions())
step("m2m again", lambda: Group.objects.get(name="g1").permissions.add(*Permission.objects.filter(codename__startswith="add_")))
step("m2m count", lambda: Group.objects.get(name="g1").permissions.count())
step("categories", lambda: [Category.objects.create(name=f"c{i}", slug=f"c{i}").pk for i in range(3)])
step("child category", lambda: Category.objects.create(name="child", slug="child", parent=Category.objects.get(name="c0")).pk)
step("bulk_create", products)
step("count", lambda: Product.objects.count())
step("filter", lambda: list(Product.objects.filter(price__gte=5).values_list("name", flat=True).order_by("name")))
step("icontains", lambda: Product.objects.filter(name__icontains="P1").count())
step("startswith", lambda: Product.objects.filter(name__startswith="p").count())
step("json contains", lambda: Product.objects.filter(tags__contains=["t"]).count())
step("json index", lambda: Product.objects.filter(tags__1=3).count())
step("json has_key", lambda: Product.objects.filter(tags__has_key="x").count())
step("annotate count", lambda: list(Category.objects.annotate(n=Count("products")).order_by("name").values_list("name", "n")))
step("annotate sum", lambda: list(Category.objects.annotate(s=Sum("products__price")).order_by("name").values_list("name", "s")))
step("aggregate", lambda: Product.objects.aggregate(Avg("price"), Max("price"), Sum("price")))
step("select_related", lambda: [p.category.name for p in Product.objects.select_related("category").order_by("id")[:3]])
step("prefetch_related", lambda: [len(c.products.all()) for c in Category.objects.prefetch_related("products").order_by("name")])
step("F update", lambda: Product.objects.filter(price__lt=3).update(price=F("price") * 2))
step("Q", lambda: Product.objects.filter(Q(price__lt=2) | Q(name="p9")).count())
step("Exists", lambda: list(Category.objects.annotate(has=Exists(Product.objects.filter(category=OuterRef("pk"), price__gt=8)))
                            .order_by("name").values_list("name", "has")))
step("Subquery", lambda: list(Category.objects.annotate(top=Subquery(Product.objects.filter(category=OuterRef("pk")).order_by("-price")
                                                                      .values("name")[:1])).order_by("name").values_list("name", "top")))
step("TruncMonth", lambda: list(Product.objects.annotate(m=TruncMonth("created")).values("m").annotate(n=Count("id")).values_list("n", flat=True)))
step("Lower, Length", lambda: list(Product.objects.annotate(lo=Lower("name"), n=Length("name")).order_by("id").values_list("lo", "n")[:2]))
step("Coalesce uuid", lambda: list(Product.objects.annotate(u=Coalesce("uid", Value(uuid.UUID(int=0)))).order_by("id").values_list("u", flat=True)[:3]))
step("m2m add", lambda: Order.objects.create(note="o1").products.add(*Product.objects.order_by("id")[:4]))
step("m2m annotate", lambda: list(Order.objects.annotate(n=Count("products")).values_list("n", flat=True)))
step("distinct", lambda: Product.objects.values("category").distinct().count())
step("in", lambda: Product.objects.filter(id__in=list(Product.objects.order_by("id").values_list("id", flat=True)[:3])).count())
step("savepoints", savepoints)
step("select_for_update", lambda: transaction.atomic()(lambda: [p.name for p in Product.objects.select_for_update().order_by("id")[:2]])())
step("get_or_create", lambda: Category.objects.get_or_create(name="c0", defaults={"slug": "x"})[1])
step("update_or_create", lambda: Category.objects.update_or_create(name="new", defaults={"slug": "n"})[1])
step("bulk_update", lambda: Product.objects.bulk_update([Product(id=p.id, name=p.name + "!", price=p.price, category_id=p.category_id)
                                                         for p in Product.objects.order_by("id")[:3]], ["name"]))
step("unordered slice", lambda: [p.name for p in Product.objects.all()[:3]])
step("delete protected", lambda: Category.objects.get(name="c1").delete())
step("delete cascade", lambda: Order.objects.all().delete())
step("dates", lambda: len(Product.objects.dates("created", "day")))
step("iterator", lambda: sum(1 for _ in Product.objects.iterator(chunk_size=2)))
step("raw", lambda: [p.name for p in Product.objects.raw("SELECT * FROM shop_product ORDER BY id LIMIT 2")])
step("table list", lambda: sorted(t.name for t in connection.introspection.get_table_list(connection.cursor())))
step("constraints", lambda: sorted(connection.introspection.get_constraints(connection.cursor(), "shop_product")))
step("sequences", lambda: connection.introspection.get_sequences(connection.cursor(), "shop_product"))
step("columns", lambda: [(c.name, c.type_code, c.null_ok) for c in connection.introspection.get_table_description(connection.cursor(), "shop_category")])
step("delete all", lambda: Product.objects.all().delete()[0])
