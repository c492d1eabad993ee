"""The privilege model's values: an object's owner and ACLs survive the catalog's JSON
(column ACLs included), and ACL edits keep PostgreSQL's invariants (aclupdate)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from decoding.catalog import AclItem, Ownership
from walsender_proxy.sql import privileges

_letters = st.sets(st.sampled_from("arwx")).map(lambda s: "".join(c for c in "arwx" if c in s))
_items = st.builds(AclItem, st.integers(0, 20000), st.integers(10, 20000), _letters.filter(bool), _letters)
#: An ACL has one entry per (grantee, grantor), as aclupdate keeps it.
_acls = st.lists(_items, max_size=4, unique_by=lambda i: (i.grantee, i.grantor)).map(tuple)


@given(
    owner=st.integers(10, 20000),
    acl=st.none() | _acls,
    columns=st.dictionaries(st.integers(1, 1600), _acls.filter(bool), max_size=4),
)
def test_ownership_survives_json(owner: int, acl: tuple[AclItem, ...] | None, columns: dict[int, tuple[AclItem, ...]]) -> None:
    own = Ownership(owner, acl, tuple(sorted(columns.items())))
    assert Ownership.from_json(own.to_json()) == own
    for num, items in columns.items():
        assert own.column_acl(num) == items
    assert own.column_acl(0) == ()


@given(acl=_acls, grantee=st.integers(1, 50), grantor=st.integers(10, 20), letters=_letters.filter(bool), option=st.booleans())
def test_a_grant_then_its_revoke_leaves_the_grantee_without_it(
    acl: tuple[AclItem, ...], grantee: int, grantor: int, letters: str, option: bool
) -> None:
    after = privileges.granted(acl, grantee, grantor, letters, option, "column")
    mine = [i for i in after if i.grantee == grantee and i.grantor == grantor]
    assert len(mine) == 1 and set(letters) <= set(mine[0].privileges)
    assert all(c in "arwx" for c in mine[0].privileges)  # (in PostgreSQL's order of letters)
    back = privileges.revoked(after, grantee, grantor, letters, grant_option_only=False, cascade=True, owner=grantor, kind="column")
    assert not any(set(letters) & set(i.privileges) for i in back if i.grantee == grantee and i.grantor == grantor)
    assert all(i.privileges for i in back)  # (an entry left with nothing goes)


def test_a_function_acl_starts_with_public_execute() -> None:
    own = Ownership(10)
    assert privileges.effective_acl(own, "function") == (AclItem(0, 10, "X"), AclItem(10, 10, "X"))
    assert privileges.acl_text(privileges.effective_acl(own, "function"), {10: "alice"}) == ["=X/alice", "alice=X/alice"]
