"""GROUP BY a table's primary key lets a query select the table's other columns, as
PostgreSQL's functional dependency allows (Django's annotate() groups by the key alone):
answers, the 42803 of what is still ungrouped (named with its table, at its position), a
view that rests on the key (DROP of the key 2BP01, CASCADE takes the view), beside a real
PostgreSQL 15 run through psql."""

from __future__ import annotations

import pytest

from tests.pgcluster import PgCluster
from tests.pgcompare import psql_outputs
from tests.proxy import ProxyServer

pytestmark = pytest.mark.integration

SCRIPT = """
create table fg_a (id int constraint fg_a_pkey primary key, kw text, title text unique not null, body jsonb, created date);
create table fg_c (a_id int, c_id int, changed date, primary key (a_id, c_id));
create table fg_p (product_id int, name text, price numeric);
create table fg_s (product_id int, units int);
insert into fg_a values (1, 'k', 't1', '{"b": 1}', '2020-01-01'), (2, 'k2', 't2', null, null), (3, null, 't3', '[]', '2021-02-03');
insert into fg_c values (1, 14, '2020-01-01'), (1, 62, null), (2, 14, null);
insert into fg_p values (1, 'x', 2.5), (2, 'y', 1);
insert into fg_s values (1, 3), (1, 4), (2, 1);
select id, kw, title, body, created from fg_a group by id order by id;
select id, kw, title from fg_a group by title;
select a.id, a.kw, a.title, count(*) from fg_a as a, fg_c as c where a.id = c.a_id group by a.id order by 1;
select a.title, count(c.*) from fg_a a left join fg_c c on c.a_id = a.id group by a.id order by 1;
select c.changed from fg_a a join fg_c c on a.id = c.a_id group by c.c_id, c.a_id order by 1;
select c.changed from fg_a a join fg_c c on a.id = c.a_id group by c.a_id;
select id, title, count(*) from fg_a group by 1 order by 1;
select id as x, title from fg_a group by x order by 1;
select z.t from fg_a z(i, k, t) group by z.i order by 1;
select id, title from fg_a group by id having length(kw) > 1 order by created desc;
select title from fg_a group by rollup (id);
select title from (select * from fg_a) s group by id;
select product_id, p.name, (sum(s.units) * p.price) as sales from fg_p p left join fg_s s using (product_id) group by product_id;
alter table fg_p add primary key (product_id);
select product_id, p.name, (sum(s.units) * p.price) as sales from fg_p p left join fg_s s using (product_id) group by product_id order by 1;
select product_id, p.name from fg_p p full join fg_s s using (product_id) group by product_id;
create view fg_v1 as select id, kw, title from fg_a group by id;
create view fg_v2 as select * from fg_v1;
create view fg_v3 as select a.id, c.changed from fg_a a join fg_c c on a.id = c.a_id group by a.id, c.a_id, c.c_id;
select * from fg_v1 order by id;
alter table fg_a drop constraint fg_a_pkey restrict;
alter table fg_c drop constraint fg_c_pkey;
alter table fg_a drop constraint fg_a_pkey cascade;
select relname from pg_class where relname like 'fg_v%' order by 1;
alter table fg_c drop constraint fg_c_pkey cascade;
select count(*) from pg_class where relname like 'fg_v%';
"""


def test_grouping_by_a_primary_key_as_postgresql(proxy: ProxyServer, pg15: PgCluster) -> None:
    ours, ref = psql_outputs(str(pg15.bindir / "psql"), SCRIPT, proxy.dsn(), pg15.dsn(dbname=pg15.new_database("fgroup")))
    assert ours == ref
    assert ref[1].count("must appear in the GROUP BY clause") == 6
    assert "because other objects depend on it" in ref[1]
