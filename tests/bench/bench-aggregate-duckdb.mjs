// bench-aggregate-duckdb.mjs - the DuckDB reference of bench-aggregate-link.sh:
// the same GROUP BY with the same functions over the same JSON lines, on
// THREADS threads.
//   node bench-aggregate-duckdb.mjs JSONL THREADS
// Prints "result groups=G cpu_s=C wall_s=W" (the query's process CPU and
// wall time).
import { DuckDBInstance } from '@duckdb/node-api';

const [jsonl, threads] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`SET threads = ${Number(threads)}`);
const sql = `SELECT customer.id AS _pk, count(*) AS n,
    sum(CAST(priority AS INTEGER)) AS prio_sum, min(ts) AS first_ts, max(ts) AS last_ts,
    avg(CAST(priority AS INTEGER)) AS prio_avg, approx_count_distinct(subject) AS subjects,
    approx_quantile(length(body), 0.9) AS body_p90
  FROM read_json('${jsonl}', format = 'newline_delimited', columns = {subject: 'VARCHAR',
    body: 'VARCHAR', priority: 'VARCHAR', customer: 'STRUCT(id BIGINT)', ts: 'BIGINT'})
  GROUP BY customer.id`;
const w0 = performance.now();
const c0 = process.cpuUsage();
const r = await con.runAndReadAll(`SELECT count(*)::BIGINT AS g, sum(n)::BIGINT AS n FROM (${sql})`);
const c = process.cpuUsage(c0);
const wall = (performance.now() - w0) / 1000;
const row = r.getRowObjectsJson()[0];
console.log(`result groups=${row.g} records=${row.n} cpu_s=${(c.user + c.system) / 1e6} wall_s=${wall}`);
