// bench-parquet-duckdb.mjs - the DuckDB reference of bench-parquet: one
// thread, the same ticket rows as JSON lines, zstd.
//   node bench-parquet-duckdb.mjs JSONL DIR ROWS
import { DuckDBInstance } from '@duckdb/node-api';
import { statSync, unlinkSync } from 'node:fs';

const [jsonl, dir, rows] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run('SET threads = 1');
const select = `SELECT subject, body, CAST(priority AS INTEGER) AS priority, customer,
  make_timestamp(ts)::TIMESTAMPTZ AS ts
  FROM read_json('${jsonl}', format = 'newline_delimited', columns = {id: 'BIGINT',
  subject: 'VARCHAR', body: 'VARCHAR', priority: 'VARCHAR', customer: 'VARCHAR', ts: 'BIGINT'})`;
const out1 = `${dir}/bench-duckdb-json.parquet`;
const out2 = `${dir}/bench-duckdb-table.parquet`;
let t = performance.now();
await con.run(`COPY (${select}) TO '${out1}' (FORMAT parquet, COMPRESSION zstd)`);
const tJson = (performance.now() - t) / 1000;
await con.run(`CREATE TABLE t AS ${select}`);
t = performance.now();
await con.run(`COPY t TO '${out2}' (FORMAT parquet, COMPRESSION zstd)`);
const tTable = (performance.now() - t) / 1000;
const n = Number(rows);
const line = (label, secs, file) =>
  console.log(`duckdb 1 thread ${label.padEnd(22)} ${(n / secs).toFixed(0).padStart(8)} rows/s  ` +
    `${(statSync(file).size / 1e6).toFixed(1).padStart(7)} MB out  ${secs.toFixed(2)} s`);
line('JSON lines -> zstd', tJson, out1);
line('table -> zstd', tTable, out2);
// Check that DuckDB reads our zstd file back whole.
const r = await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${dir}/bench-zstd-1.parquet')`);
console.log(`duckdb reads the loams zstd file: ${r.getRowObjectsJson()[0].n} rows`);
unlinkSync(out1);
unlinkSync(out2);
