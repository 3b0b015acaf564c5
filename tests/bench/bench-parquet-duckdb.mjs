// bench-parquet-duckdb.mjs - the DuckDB reference of bench-parquet: one
// thread, the same ticket rows as JSON lines, zstd.
//   node bench-parquet-duckdb.mjs JSONL DIR ROWS
import { DuckDBInstance } from '@duckdb/node-api';
import { statSync, unlinkSync } from 'node:fs';

const [jsonl, dir, rows, ours] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run('SET threads = 1');
const select = `SELECT subject, body, CAST(priority AS INTEGER) AS priority, customer,
  make_timestamp(ts)::TIMESTAMPTZ AS ts
  FROM read_json('${jsonl}', format = 'newline_delimited', columns = {id: 'BIGINT',
  subject: 'VARCHAR', body: 'VARCHAR', priority: 'VARCHAR', customer: 'VARCHAR', ts: 'BIGINT'})`;
const out1 = `${dir}/bench-duckdb-json.parquet`;
const out2 = `${dir}/bench-duckdb-table.parquet`;
// CPU time of the process (DuckDB runs on this thread with threads = 1),
// and wall time: the machine is shared, CPU time is the steadier figure.
async function timed(sql) {
  const w0 = performance.now();
  const c0 = process.cpuUsage();
  await con.run(sql);
  const c = process.cpuUsage(c0);
  return { cpu: (c.user + c.system) / 1e6, wall: (performance.now() - w0) / 1000 };
}
const tJson = await timed(`COPY (${select}) TO '${out1}' (FORMAT parquet, COMPRESSION zstd)`);
await con.run(`CREATE TABLE t AS ${select}`);
const tTable = await timed(`COPY t TO '${out2}' (FORMAT parquet, COMPRESSION zstd)`);
const n = Number(rows);
const line = (label, t, file) =>
  console.log(`duckdb 1 thread ${label.padEnd(22)} ${(n / t.cpu).toFixed(0).padStart(8)} rows/s` +
    `${''.padStart(13)}${(statSync(file).size / 1e6).toFixed(1).padStart(7)} MB out  cpu ${t.cpu.toFixed(2)} s  ` +
    `(wall ${t.wall.toFixed(2)} s: ${(n / t.wall).toFixed(0)} rows/s)`);
line('JSON lines -> zstd', tJson, out1);
line('table -> zstd', tTable, out2);
// Check that DuckDB reads our zstd file back whole.
const r = await con.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${ours}')`);
console.log(`duckdb reads the loams zstd file: ${r.getRowObjectsJson()[0].n} rows`);
unlinkSync(out1);
unlinkSync(out2);
