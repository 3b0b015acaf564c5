// bench-link-table-duckdb.mjs - the DuckDB reference of `bench-link-apply
// -t table`: the same JSON lines to one Parquet file with the link's
// columns and codec, with SET threads = THREADS; then DuckDB reads the
// link's data files and its own file back and checks that they hold the
// same rows (the count and the sum of a hash of every row).
//   node bench-link-table-duckdb.mjs JSONL OUT.parquet THREADS OUR_FILES_LIST [LEVEL|none]
// LEVEL is the zstd level (COMPRESSION_LEVEL; DuckDB's own default is 3),
// `none` writes uncompressed pages.
// Prints "result rows=R bytes=B cpu_s=C wall_s=W rss_kb=K" (the COPY's
// process CPU and wall time, the file's size, node's peak RSS) and a
// "check" line; exits 1 when the rows differ.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, statSync, unlinkSync } from 'node:fs';

const [jsonl, out, threads, oursList, level] = process.argv.slice(2);
const codec = level === 'none' ? 'COMPRESSION uncompressed'
  : `COMPRESSION zstd${level ? `, COMPRESSION_LEVEL ${Number(level)}` : ''}`;
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`SET threads = ${Number(threads)}`);
// make_timestamp(BIGINT) reads UTC microseconds; with TimeZone UTC the
// TIMESTAMPTZ holds the same instant as the link's timestamptz column.
await con.run(`SET TimeZone = 'UTC'`);
const select = `SELECT subject, body, CAST(priority AS INTEGER) AS priority,
  customer.name AS customer, make_timestamp(ts)::TIMESTAMPTZ AS ts
  FROM read_json('${jsonl}', format = 'newline_delimited', columns = {subject: 'VARCHAR',
  body: 'VARCHAR', priority: 'VARCHAR', customer: 'STRUCT(name VARCHAR)', ts: 'BIGINT'})`;
const w0 = performance.now();
const c0 = process.cpuUsage();
await con.run(`COPY (${select}) TO '${out}' (FORMAT parquet, ${codec})`);
const c = process.cpuUsage(c0);
const wall = (performance.now() - w0) / 1000;
const rss = process.resourceUsage().maxRSS;

const digest = async (from) => {
  const r = await con.runAndReadAll(`SELECT count(*)::BIGINT AS n,
      sum(hash(subject, body, priority, customer, epoch_us(ts))::HUGEINT)::VARCHAR AS h,
      typeof(any_value(priority)) AS pt, typeof(any_value(ts)) AS tt FROM ${from}`);
  return r.getRowObjectsJson()[0];
};
const files = readFileSync(oursList, 'utf8').split('\n').filter((l) => l !== '');
if (files.length === 0) {
  console.error('bench-link-table-duckdb: the list of the link\'s data files is empty');
  process.exit(1);
}
const theirs = await digest(`read_parquet('${out}')`);
const ours = await digest(`read_parquet([${files.map((f) => `'${f}'`).join(', ')}])`);
const bytes = statSync(out).size;
unlinkSync(out);
console.log(`result rows=${theirs.n} bytes=${bytes} cpu_s=${(c.user + c.system) / 1e6} ` +
  `wall_s=${wall} rss_kb=${rss}`);
if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
  console.log(`check: the link's ${files.length} data files hold ${JSON.stringify(ours)}, ` +
    `DuckDB's file ${JSON.stringify(theirs)}: the rows differ`);
  process.exit(1);
}
console.log(`check: DuckDB reads the same ${ours.n} rows (${ours.pt} priority, ${ours.tt} ts) ` +
  `from the link's ${files.length} data files as from its own file`);
