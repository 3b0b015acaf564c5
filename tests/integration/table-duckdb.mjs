// table-duckdb.mjs - DuckDB, an independent reader, reads the Parquet data
// files of an Iceberg table's current snapshot (listed by table-files.py)
// and prints every row as one JSON line, ordered by the column ORDER.
//
//   node table-duckdb.mjs FILES_LIST ORDER
//
// read_parquet(..., union_by_name) reads old and new files of an evolved
// schema together (a column missing from older files reads as NULL; int
// and float columns widened to long and double read as the wider type).
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const [listFile, order] = process.argv.slice(2);
const files = readFileSync(listFile, 'utf8').split('\n').filter((l) => l.length > 0);
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
const list = files.map((f) => `'${f.replace(/^file:\/\//, '').replace(/'/g, "''")}'`).join(',');
const types = await con.runAndReadAll(
  `SELECT name, type FROM parquet_schema([${list}]) WHERE name <> 'schema' GROUP BY ALL ORDER BY ALL`);
process.stderr.write(`duckdb: ${files.length} files; column types ${JSON.stringify(types.getRowObjectsJson())}\n`);
const r = await con.runAndReadAll(
  `SELECT * EXCLUDE (filename) FROM read_parquet([${list}], union_by_name = true, filename = true) ORDER BY ${order}`);
// BIGINTs come back as BigInt: print them as JSON numbers
const num = (k, v) => (typeof v === 'bigint' ? Number(v) : v);
for (const row of r.getRowObjects()) {
  process.stdout.write(JSON.stringify(row, num) + '\n');
}
