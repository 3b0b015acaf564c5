// table-metrics.mjs - DuckDB, an independent reader, describes each Parquet
// data file listed in FILES_LIST (one URI a line) for table-metrics.py:
// the file's row count, its column chunks from parquet_metadata (leaf
// field ids from parquet_schema; sizes, value and null counts; where each
// row group starts) and, per column, what DuckDB computes from the rows:
// NULLs, NaNs, min and max of the non-null non-NaN values (strings and
// binary as hex of their bytes, numbers as text, dates as days and
// timestamps as microseconds since the epoch), and for lists the level
// entries (a null or empty list is one) and the null / empty lists.
//
//   node table-metrics.mjs FILES_LIST  > facts.json
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const files = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.length > 0);
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();
const lit = (s) => `'${s.replace(/'/g, "''")}'`;
const ident = (s) => `"${s.replace(/"/g, '""')}"`;

const out = [];
for (const uri of files) {
  const path = uri.replace(/^file:\/\//, '');
  const f = lit(path);
  const schema = await q(`SELECT name, type, field_id, num_children FROM parquet_schema(${f})`);
  // leaves in schema order are the column chunks' column_id order
  const leaves = schema.filter((s) => s.num_children === null || Number(s.num_children) === 0)
    .filter((s) => s.type !== null);
  const chunks = await q(`SELECT row_group_id, column_id, path_in_schema, num_values,
      total_compressed_size, stats_null_count, data_page_offset, dictionary_page_offset
    FROM parquet_metadata(${f}) ORDER BY row_group_id, column_id`);
  const cols = await q(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(${f}))`);
  const rows = Number((await q(`SELECT count(*) AS n FROM read_parquet(${f})`))[0].n);
  const facts = {};
  for (const c of cols) {
    const name = c.column_name, type = c.column_type, x = ident(name);
    let sql;
    if (type.endsWith('[]')) {
      sql = `SELECT sum(CASE WHEN ${x} IS NULL OR len(${x}) = 0 THEN 1 ELSE len(${x}) END)::VARCHAR AS entries,
        count_if(${x} IS NULL OR len(${x}) = 0)::VARCHAR AS empty,
        count_if(${x} IS NULL)::VARCHAR AS nulls,
        coalesce(sum(len(list_filter(${x}, e -> isnan(e)))), 0)::VARCHAR AS nans
        FROM read_parquet(${f})`;
    } else {
      const isfloat = type === 'FLOAT' || type === 'DOUBLE';
      const keep = isfloat ? `WHERE NOT isnan(${x})` : '';
      let v = `${x}::VARCHAR`;
      if (type === 'VARCHAR' || type === 'BLOB') v = `hex(${x})`;
      else if (type === 'BOOLEAN') v = `${x}::INTEGER::VARCHAR`;
      else if (type === 'DATE') v = `date_diff('day', DATE '1970-01-01', ${x})::VARCHAR`;
      else if (type.startsWith('TIMESTAMP')) v = `epoch_us(${x})::VARCHAR`;
      // min/max in the column's order (bytes for strings and blobs)
      sql = `SELECT (SELECT count(*) - count(${x}) FROM read_parquet(${f}))::VARCHAR AS nulls,
        (SELECT ${isfloat ? `count_if(isnan(${x}))` : 'count(*) * 0'} FROM read_parquet(${f}))::VARCHAR AS nans,
        (SELECT ${v} FROM read_parquet(${f}) ${keep} ${keep ? 'AND' : 'WHERE'} ${x} IS NOT NULL
           ORDER BY ${x} ASC LIMIT 1) AS min,
        (SELECT ${v} FROM read_parquet(${f}) ${keep} ${keep ? 'AND' : 'WHERE'} ${x} IS NOT NULL
           ORDER BY ${x} DESC LIMIT 1) AS max`;
    }
    let res;
    try {
      res = await q(sql);
    } catch (e) {
      throw new Error(`${name} (${type}): ${e.message}\n${sql}`);
    }
    facts[name] = { type, ...res[0] };
  }
  out.push({ uri, rows, leaves, chunks, columns: facts });
}
process.stdout.write(JSON.stringify(out) + '\n');
