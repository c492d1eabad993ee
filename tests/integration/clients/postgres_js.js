// postgres.js ("postgres") as applications use it. It prepares each query, reads the
// parameter types from the server's ParameterDescription and serialises every value for
// that type (an object becomes JSON only for a json/jsonb parameter). Parameterised
// queries with = ANY($1), jsonb both ways, timestamps, numerics, bytea, a transaction and
// sql.unsafe with prepare. Prints what it saw, step by step, for the test to compare with
// PostgreSQL 15's run.
// usage: node postgres_js.js <connection string> <table name>
const postgres = require('postgres');

const [, , url, t] = process.argv;

function show(v) {
  if (v === null || v === undefined) return 'null';
  if (Buffer.isBuffer(v)) return 'Buffer:' + v.toString('hex');
  if (v instanceof Date) return 'Date:' + v.toISOString();
  if (Array.isArray(v)) return '[' + v.map(show).join(', ') + ']';
  if (typeof v === 'object') return 'Object:' + JSON.stringify(v);
  return typeof v + ':' + String(v);
}

function dump(title, rows) {
  const cols = rows.columns ? rows.columns.map((c) => `${c.name}:${c.type}`).join(',') : '';
  console.log(`== ${title} [${cols}] ${rows.command} ${rows.count}`);
  for (const row of rows) console.log(Object.keys(row).map((k) => show(row[k])).join(' | '));
}

async function step(name, fn) {
  try {
    await fn();
  } catch (e) {
    console.log(`!! ${name}: ${e.code} ${e.message}`);
  }
}

async function main() {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const tbl = sql(t);
  await step('create', async () => {
    await sql`CREATE TABLE ${tbl} (id int PRIMARY KEY, name text, doc jsonb, ts timestamp,
      tstz timestamptz, amount numeric(12,2), big bigint, data bytea, tags text[], flag boolean)`;
  });
  await step('insert', async () => {
    for (let i = 1; i <= 4; i++) {
      const doc = { n: i, nested: { a: [1, 'x', null] }, s: "it's" };
      const res = await sql`INSERT INTO ${tbl} (id, name, doc, ts, tstz, amount, big, data, tags, flag)
        VALUES (${i}, ${'name ' + i}, ${doc}, ${new Date(Date.UTC(2024, i, 10 + i, 12, 30, 15, 250))},
        ${new Date(Date.UTC(2024, 0, i, 8))}, ${i + '234.5' + i}, ${String(9000000000 + i)},
        ${Buffer.from([0, i, 255, 92])}, ${['a', 'b' + i, 'with space', 'q"uote']}, ${i % 2 === 0})`;
      console.log(`insert ${i} -> ${res.command} ${res.count}`);
    }
  });
  await step('insert json helper', async () => {
    const res = await sql`INSERT INTO ${tbl} (id, name, doc) VALUES (5, 'helper', ${sql.json({ via: 'sql.json', list: [1, 2] })})`;
    console.log(`insert 5 -> ${res.command} ${res.count}`);
  });
  await step('insert helper', async () => {
    const rows = [
      { id: 6, name: 'helper 6', doc: { k: [6] }, tags: ['x'], amount: '6.5' },
      { id: 7, name: 'helper 7', doc: null, tags: [], amount: null },
    ];
    const res = await sql`INSERT INTO ${tbl} ${sql(rows, 'id', 'name', 'doc', 'tags', 'amount')} RETURNING id, doc, tags`;
    dump('insert helper', res);
  });
  await step('update helper', async () => {
    const res = await sql`UPDATE ${tbl} SET ${sql({ name: 'helper six', flag: true }, 'name', 'flag')} WHERE id = ${6} RETURNING id, name, flag`;
    dump('update helper', res);
  });
  await step('in helper', async () => {
    dump('in helper', await sql`SELECT id FROM ${tbl} WHERE id IN ${sql([2, 6, 7])} ORDER BY id`);
  });
  await step('any', async () => {
    dump('any', await sql`SELECT id, name FROM ${tbl} WHERE id = ANY(${[1, 3, 4]}) ORDER BY id`);
  });
  await step('any text', async () => {
    dump('any text', await sql`SELECT id FROM ${tbl} WHERE name = ANY(${['name 2', 'name 4']}) ORDER BY id`);
  });
  await step('select all', async () => {
    dump('select all', await sql`SELECT * FROM ${tbl} ORDER BY id`);
  });
  await step('json param', async () => {
    dump('json param', await sql`SELECT id, doc->'nested' AS nested, doc->>'s' AS s FROM ${tbl} WHERE doc @> ${{ n: 2 }} ORDER BY id`);
  });
  await step('json stored as text?', async () => {
    dump('json text', await sql`SELECT id, doc::text AS doc FROM ${tbl} ORDER BY id`);
  });
  await step('timestamp param', async () => {
    dump('timestamp param', await sql`SELECT id, ts FROM ${tbl} WHERE ts > ${new Date(Date.UTC(2024, 2, 1))} AND tstz <= ${new Date(Date.UTC(2024, 0, 3, 8))} ORDER BY id`);
  });
  await step('numeric', async () => {
    dump('numeric', await sql`SELECT sum(amount) AS total, max(big) AS big, count(*) AS n FROM ${tbl} WHERE amount > ${'1500.00'}`);
  });
  await step('bytea param', async () => {
    dump('bytea param', await sql`SELECT id, data FROM ${tbl} WHERE data = ${Buffer.from([0, 3, 255, 92])}`);
  });
  await step('transaction', async () => {
    try {
      await sql.begin(async (tx) => {
        await tx`UPDATE ${tbl} SET doc = ${{ updated: true, list: [1, 2] }}, amount = amount + ${0.5} WHERE id = ${1}`;
        await tx`DELETE FROM ${tbl} WHERE id = ${4}`;
        dump('inside', await tx`SELECT id, doc, amount FROM ${tbl} ORDER BY id`);
        throw new Error('roll back');
      });
    } catch (e) {
      console.log('rolled back: ' + e.message);
    }
    dump('after rollback', await sql`SELECT id, doc, amount FROM ${tbl} ORDER BY id`);
    await sql.begin(async (tx) => {
      await tx`UPDATE ${tbl} SET doc = ${{ updated: true }} WHERE id = ${1}`;
    });
    dump('after commit', await sql`SELECT id, doc FROM ${tbl} WHERE id = 1`);
  });
  await step('prepared', async () => {
    for (let i = 1; i <= 3; i++) {
      dump(`prepared ${i}`, await sql.unsafe(`SELECT id, name, ts, amount, tags FROM ${t} WHERE id = $1`, [i], { prepare: true }));
    }
  });
  await step('more types', async () => {
    const m = sql(t + '_m');
    await sql`CREATE TABLE ${m} (u uuid, d date, tm time, iv interval, r real, s smallint, ch char(3))`;
    await sql`INSERT INTO ${m} (u, d, tm, iv, r, s, ch) VALUES (${'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'}, ${'2024-02-29'}, ${'13:14:15.5'},
      ${'1 day 02:03:04'}, ${1.5}, ${7}, ${'ab'})`;
    dump('more types', await sql`SELECT * FROM ${m} WHERE u = ${'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'} AND d < ${new Date(Date.UTC(2024, 5, 1))}`);
    dump('more types text', await sql`SELECT u::text, d::text, tm::text, iv::text, r::text, s::text, ch || '|' AS ch FROM ${m}`);
  });
  await step('cursor', async () => {
    // Execute with a row limit (PortalSuspended) two rows at a time
    const seen = [];
    for await (const rows of sql`SELECT id FROM ${tbl} ORDER BY id`.cursor(2)) seen.push(rows.map((r) => r.id).join('+'));
    console.log('cursor ' + seen.join(' '));
  });
  await step('savepoint', async () => {
    await sql.begin('isolation level repeatable read', async (tx) => {
      await tx`UPDATE ${tbl} SET name = ${'in tx'} WHERE id = ${2}`;
      await tx.savepoint(async (sp) => {
        await sp`UPDATE ${tbl} SET name = ${'in savepoint'} WHERE id = ${3}`;
        await sp`SELECT 1/0`;
      }).catch((e) => console.log(`savepoint error ${e.code} ${e.message}`));
      dump('in tx', await tx`SELECT id, name, current_setting('transaction_isolation') AS iso FROM ${tbl} WHERE id IN (2, 3) ORDER BY id`);
    });
  });
  await step('listen', async () => {
    let heard;
    const arrived = new Promise((resolve) => { heard = resolve; });
    const { unlisten } = await sql.listen('jsdrv_channel', (payload) => heard(payload));
    await sql.notify('jsdrv_channel', 'hello');
    console.log(`listen -> ${await arrived}`);
    await unlisten();
  });
  await step('xml column', async () => {
    // a type the lake does not store: the proxy refuses the table (0A000)
    await sql`CREATE TABLE ${sql(t + '_x')} (x xml)`;
    console.log('xml column -> created');
  });
  await step('error', async () => {
    await sql`SELECT id FROM ${tbl} WHERE id = ${'not a number'}`;
  });
  await step('after error', async () => {
    dump('after error', await sql`SELECT ${1}::int + 1 AS two`);
  });
  await sql.end();
}

main().catch((e) => { console.log('FATAL', e.code, e.message); process.exit(1); });
