// node-postgres ("pg") as applications use it: parameterised queries (every parameter is
// sent as text of unspecified type), = ANY($1) with a JS array, jsonb objects both ways,
// timestamps, numerics, bytea (Buffer), a transaction and a prepared (named) query. Prints
// what it saw, step by step, for the test to compare with PostgreSQL 15's run.
// usage: node node_pg.js <connection string> <table name>
const { Client, types } = require('pg');

const [, , url, t] = process.argv;

function show(v) {
  if (v === null || v === undefined) return 'null';
  if (Buffer.isBuffer(v)) return 'Buffer:' + v.toString('hex');
  if (v instanceof Date) return 'Date:' + v.toISOString();
  if (Array.isArray(v)) return '[' + v.map(show).join(', ') + ']';
  if (typeof v === 'object') return 'Object:' + JSON.stringify(v);
  return typeof v + ':' + String(v);
}

function dump(title, res) {
  console.log(`== ${title} [${res.fields.map((f) => `${f.name}:${f.dataTypeID}`).join(',')}] ${res.command} ${res.rowCount}`);
  for (const row of res.rows) console.log(Object.keys(row).map((k) => show(row[k])).join(' | '));
}

async function step(c, name, fn) {
  try {
    await fn();
  } catch (e) {
    console.log(`!! ${name}: ${e.code} ${e.message}`);
    try { await c.query('ROLLBACK'); } catch (_) { /* not in a block */ }
  }
}

async function main() {
  const c = new Client({ connectionString: url });
  await c.connect();
  await step(c, 'create', async () => {
    await c.query(`CREATE TABLE ${t} (id int PRIMARY KEY, name text, doc jsonb, ts timestamp,
      tstz timestamptz, amount numeric(12,2), big bigint, data bytea, tags text[], flag boolean)`);
  });
  await step(c, 'insert', async () => {
    for (let i = 1; i <= 4; i++) {
      const res = await c.query(
        `INSERT INTO ${t} (id, name, doc, ts, tstz, amount, big, data, tags, flag) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [i, `name ${i}`, { n: i, nested: { a: [1, 'x', null] }, s: "it's" }, new Date(Date.UTC(2024, i, 10 + i, 12, 30, 15, 250)),
          new Date(Date.UTC(2024, 0, i, 8, 0, 0)), `${i}234.5${i}`, `${9000000000 + i}`, Buffer.from([0, i, 255, 92]),
          ['a', `b${i}`, 'with space', 'q"uote'], i % 2 === 0]);
      console.log(`insert ${i} -> ${res.command} ${res.rowCount}`);
    }
  });
  await step(c, 'any', async () => {
    dump('any', await c.query(`SELECT id, name FROM ${t} WHERE id = ANY($1) ORDER BY id`, [[1, 3, 4]]));
  });
  await step(c, 'any text', async () => {
    dump('any text', await c.query(`SELECT id FROM ${t} WHERE name = ANY($1) ORDER BY id`, [['name 2', 'name 4']]));
  });
  await step(c, 'select all', async () => {
    dump('select all', await c.query(`SELECT * FROM ${t} ORDER BY id`));
  });
  await step(c, 'json param', async () => {
    dump('json param', await c.query(`SELECT id, doc->'nested' AS nested, doc->>'s' AS s FROM ${t} WHERE doc @> $1 ORDER BY id`, [{ n: 2 }]));
  });
  await step(c, 'timestamp param', async () => {
    dump('timestamp param', await c.query(`SELECT id, ts FROM ${t} WHERE ts > $1 AND tstz <= $2 ORDER BY id`,
      [new Date(Date.UTC(2024, 2, 1)), new Date(Date.UTC(2024, 0, 3, 8))]));
  });
  await step(c, 'numeric', async () => {
    dump('numeric', await c.query(`SELECT sum(amount) AS total, max(big) AS big, count(*) AS n FROM ${t} WHERE amount > $1`, ['1500.00']));
  });
  await step(c, 'bytea param', async () => {
    dump('bytea param', await c.query(`SELECT id, data FROM ${t} WHERE data = $1`, [Buffer.from([0, 3, 255, 92])]));
  });
  await step(c, 'transaction', async () => {
    await c.query('BEGIN');
    await c.query(`UPDATE ${t} SET doc = $1, amount = amount + $2 WHERE id = $3`, [{ updated: true, list: [1, 2] }, 0.5, 1]);
    await c.query(`DELETE FROM ${t} WHERE id = $1`, [4]);
    dump('inside', await c.query(`SELECT id, doc, amount FROM ${t} ORDER BY id`));
    await c.query('ROLLBACK');
    dump('after rollback', await c.query(`SELECT id, doc, amount FROM ${t} ORDER BY id`));
    await c.query('BEGIN');
    await c.query(`UPDATE ${t} SET doc = $1 WHERE id = $2`, [{ updated: true }, 1]);
    await c.query('COMMIT');
    dump('after commit', await c.query(`SELECT id, doc FROM ${t} WHERE id = 1`));
  });
  await step(c, 'array rows', async () => {
    const res = await c.query({ text: `SELECT id, tags, doc->'n' AS n FROM ${t} WHERE id <= $1 ORDER BY id`, values: [2], rowMode: 'array' });
    console.log(`== array rows ${res.rowCount}`);
    for (const row of res.rows) console.log(row.map(show).join(' | '));
  });
  await step(c, 'simple multi', async () => {
    const res = await c.query(`SELECT count(*) AS n FROM ${t}; SELECT max(id) AS m FROM ${t}`);
    for (const r of res) dump('multi', r);
  });
  await step(c, 'null params', async () => {
    await c.query(`INSERT INTO ${t} (id, name, doc, ts, amount, data, tags) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [9, null, null, null, null, null, null]);
    dump('null params', await c.query(`SELECT * FROM ${t} WHERE id = $1`, [9]));
  });
  await step(c, 'prepared', async () => {
    for (let i = 1; i <= 3; i++) {
      dump(`prepared ${i}`, await c.query({ name: `by_id_${t}`, text: `SELECT id, name, ts, amount, tags FROM ${t} WHERE id = $1`, values: [i] }));
    }
  });
  for (const [name, text, values] of [
    ['duplicate', `INSERT INTO ${t} (id) VALUES ($1)`, [1]],
    ['not null', `UPDATE ${t} SET id = NULL WHERE id = $1`, [2]],
    ['missing table', 'SELECT * FROM no_such_table_here', []],
    ['missing column', `SELECT nope FROM ${t}`, []],
    ['bad json', `UPDATE ${t} SET doc = $1 WHERE id = 1`, ['{"a": ']],
    ['syntax', 'SELEC 1', []],
  ]) {
    try {
      await c.query(text, values);
      console.log(`${name} -> no error`);
    } catch (e) {
      const fields = ['severity', 'code', 'message', 'detail', 'hint', 'position', 'schema', 'table', 'column', 'constraint', 'dataType'];
      console.log(`${name} -> ` + fields.map((f) => `${f}=${e[f] === undefined ? '-' : e[f]}`).join(' '));
    }
  }
  await step(c, 'error', async () => {
    await c.query(`SELECT id FROM ${t} WHERE id = $1`, ['not a number']);
  });
  await step(c, 'after error', async () => {
    dump('after error', await c.query('SELECT $1::int + 1 AS two', [1]));
  });
  await c.end();
}

main().catch((e) => { console.log('FATAL', e.code, e.message); process.exit(1); });
