// parquet-duckdb.mjs - DuckDB, an independent reader, checks every Parquet
// file that parquet_sample_writer wrote: row counts, every value, column
// types, field ids (parquet_schema), statistics (parquet_metadata),
// encodings, codecs, row groups and key/value metadata.
//
//   node parquet-duckdb.mjs DIR
//
// The value of each cell is a function of its row number i; the same
// functions are in parquet_sample_writer.c (keep them in step).
import { DuckDBInstance } from '@duckdb/node-api';

const dir = process.argv[2];
let failures = 0;
let checks = 0;
function check(cond, what) {
  checks++;
  if (!cond) {
    failures++;
    if (failures <= 30) console.error('FAIL: ' + what);
  }
}

const COLS = ['b', 'i32', 'i64', 'f32', 'f64', 'cust', 'body', 'bin', 'ts', 'd', 'vec'];
const f32 = (x) => Math.fround(x);

function expected(i) {
  const bi = BigInt(i);
  const body = 'body-' + i + '-\u00e9\u2603' + 'x'.repeat(i % 40);
  let bin = '';
  for (let k = 0; k < i % 5; k++) bin += ((k * 7 + i) & 255).toString(16).toUpperCase().padStart(2, '0');
  const vecAll = [f32(i), f32(i + 0.5), f32(-i)];
  return {
    b: i % 7 === 0 ? null : i % 3 === 0,
    i32: Math.imul(i, 2654435761 | 0),
    i64: i % 5 === 0 ? null : ((bi - 2500n) * 1000000007n).toString(),
    f32: i % 1000 === 17 ? 'NaN' : f32(i * 0.25 - 100),
    f64: i % 11 === 0 ? null : i % 11 === 1 ? -0 : i / 8 - 300.5,
    cust: i % 13 === 0 ? null : 'customer-' + (i % 50),
    body,
    bin: i % 17 === 0 ? null : bin,
    ts: (1700000000000000n + bi * 1000003n).toString(),
    d: i % 19 === 0 ? null : String((i % 400) - 200),
    vec: i % 9 === 0 ? null : i % 9 === 1 ? [] : vecAll.slice(0, Math.min(3, (i % 4) + 1)),
  };
}

function same(a, b) {
  if (Array.isArray(b)) {
    return Array.isArray(a) && a.length === b.length && a.every((x, k) => same(x, b[k]));
  }
  if (typeof b === 'number' && b === 0) return Object.is(a, b);
  return a === b;
}

const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
async function rows(sql) {
  const r = await con.runAndReadAll(sql);
  return r.getRowObjectsJson();
}

const FILES = {
  'types_zstd.parquet': { rows: 5000, codec: 'ZSTD', dict: true, kv: true },
  'types_snappy.parquet': { rows: 5000, codec: 'SNAPPY', dict: true },
  'types_plain_none.parquet': { rows: 5000, codec: 'UNCOMPRESSED', dict: false },
  'rowgroups.parquet': { rows: 20000, codec: 'ZSTD', dict: true, groups: true },
  'fallback.parquet': { rows: 3000, codec: 'ZSTD', dict: true, fallback: true },
  'empty.parquet': { rows: 0, codec: 'ZSTD', dict: true },
};

const TYPES = {
  b: 'BOOLEAN', i32: 'INTEGER', i64: 'BIGINT', f32: 'FLOAT', f64: 'DOUBLE', cust: 'VARCHAR',
  body: 'VARCHAR', bin: 'BLOB', ts: 'TIMESTAMP WITH TIME ZONE', d: 'DATE', vec: 'FLOAT[]',
};
const FIELD_IDS = { b: 1, i32: 2, i64: 3, f32: 4, f64: 5, cust: 6, body: 7, bin: 8, ts: 9, d: 10, vec: 11, element: 12 };

for (const [name, spec] of Object.entries(FILES)) {
  const f = `'${dir}/${name}'`;
  // Types.
  const desc = await rows(`DESCRIBE SELECT * FROM read_parquet(${f})`);
  check(desc.length === COLS.length, `${name}: ${desc.length} columns`);
  for (const d of desc) check(TYPES[d.column_name] === d.column_type, `${name}: ${d.column_name} is ${d.column_type}`);

  // Field ids and logical types on every schema element.
  const schema = await rows(`SELECT name, field_id, logical_type, converted_type, repetition_type FROM parquet_schema(${f})`);
  for (const s of schema) {
    if (s.name === 'schema' || s.name === 'list') continue;
    check(String(FIELD_IDS[s.name]) === s.field_id, `${name}: field_id of ${s.name} is ${s.field_id}`);
  }
  const byName = Object.fromEntries(schema.map((s) => [s.name, s]));
  check(byName.cust.logical_type === 'StringType()', `${name}: cust logical type ${byName.cust.logical_type}`);
  check(/TimestampType\(isAdjustedToUTC=(1|true), unit=TimeUnit\(.*MICROS=MicroSeconds\(\)/.test(byName.ts.logical_type), `${name}: ts logical type ${byName.ts.logical_type}`);
  check(byName.d.logical_type === 'DateType()', `${name}: d logical type ${byName.d.logical_type}`);
  check(byName.vec.converted_type === 'LIST' && byName.list.repetition_type === 'REPEATED' && byName.element.repetition_type === 'REQUIRED', `${name}: vec is a 3-level list`);
  check(byName.i32.repetition_type === 'REQUIRED' && byName.i64.repetition_type === 'OPTIONAL', `${name}: repetition types`);

  // Row count and every value.
  const cnt = await rows(`SELECT count(*) AS n FROM read_parquet(${f})`);
  check(Number(cnt[0].n) === spec.rows, `${name}: ${cnt[0].n} rows, want ${spec.rows}`);
  const data = await rows(`SELECT file_row_number AS i, b, i32, i64::VARCHAR AS i64, f32, f64, cust, body,
      hex(bin) AS bin, epoch_us(ts)::VARCHAR AS ts, (d - DATE '1970-01-01')::VARCHAR AS d, vec
      FROM read_parquet(${f}, file_row_number = true) ORDER BY file_row_number`);
  let bad = 0;
  for (let k = 0; k < data.length; k++) {
    const row = data[k];
    const i = Number(row.i);
    if (i !== k) { check(false, `${name}: row ${k} has file_row_number ${i}`); break; }
    const want = expected(i);
    for (const c of COLS) {
      if (!same(row[c], want[c])) {
        if (bad++ < 5) check(false, `${name}: row ${i} column ${c} = ${JSON.stringify(row[c])}, want ${JSON.stringify(want[c])}`);
      }
    }
  }
  check(bad === 0, `${name}: ${bad} wrong values`);

  // Statistics of every column chunk, against what DuckDB read.
  const meta = await rows(`SELECT row_group_id, row_group_num_rows, path_in_schema, stats_null_count,
      stats_min_value, stats_max_value, compression, encodings, num_values
      FROM parquet_metadata(${f}) ORDER BY row_group_id, column_id`);
  const groups = [...new Set(meta.map((m) => m.row_group_id))];
  if (spec.groups) check(groups.length > 1, `${name}: ${groups.length} row groups, want several`);
  let first = 0;
  const groupStart = {};
  for (const g of groups) {
    groupStart[g] = first;
    first += Number(meta.find((m) => m.row_group_id === g).row_group_num_rows);
  }
  check(first === spec.rows, `${name}: row groups hold ${first} rows`);
  for (const m of meta) {
    const col = m.path_in_schema.split(',')[0].trim();
    const lo = groupStart[m.row_group_id];
    const hi = lo + Number(m.row_group_num_rows);
    const src = `(SELECT * FROM read_parquet(${f}, file_row_number = true) WHERE file_row_number >= ${lo} AND file_row_number < ${hi})`;
    let q;
    if (col === 'vec') {
      q = `SELECT (SELECT min(x)::VARCHAR FROM (SELECT unnest(vec) AS x FROM ${src}) WHERE NOT isnan(x)) AS mn,
                  (SELECT max(x)::VARCHAR FROM (SELECT unnest(vec) AS x FROM ${src}) WHERE NOT isnan(x)) AS mx,
                  (SELECT count(*) FILTER (WHERE vec IS NULL OR len(vec) = 0) FROM ${src}) AS nulls`;
    } else {
      const notnan = col === 'f32' || col === 'f64' ? ` FILTER (WHERE NOT isnan(${col}))` : '';
      q = `SELECT min(${col})${notnan}::VARCHAR AS mn, max(${col})${notnan}::VARCHAR AS mx, count(*) - count(${col}) AS nulls FROM ${src}`;
    }
    const [want] = await rows(q);
    check(m.stats_null_count === want.nulls, `${name} rg ${m.row_group_id} ${col}: null_count ${m.stats_null_count}, want ${want.nulls}`);
    // DuckDB shows an empty binary minimum as NULL.
    const mn = m.stats_min_value === null && want.mn === '' ? '' : m.stats_min_value;
    if (col === 'f32' || col === 'f64' || col === 'vec') {
      // Numeric equality; a zero bound must be written -0.0 (min), +0.0 (max).
      const zeroOk = (got, w, sign) => Number(w) !== 0 || got === sign;
      check(Number(mn) === Number(want.mn) && zeroOk(mn, want.mn, '-0.0'), `${name} rg ${m.row_group_id} ${col}: min ${mn}, want ${want.mn}`);
      check(Number(m.stats_max_value) === Number(want.mx) && zeroOk(m.stats_max_value, want.mx, '0.0'), `${name} rg ${m.row_group_id} ${col}: max ${m.stats_max_value}, want ${want.mx}`);
    } else {
      check(mn === want.mn, `${name} rg ${m.row_group_id} ${col}: min ${m.stats_min_value}, want ${want.mn}`);
      check(m.stats_max_value === want.mx, `${name} rg ${m.row_group_id} ${col}: max ${m.stats_max_value}, want ${want.mx}`);
    }
    check(m.compression === spec.codec, `${name} ${col}: codec ${m.compression}, want ${spec.codec}`);
    const dictCol = col === 'cust' || col === 'body' || col === 'bin';
    const hasDict = /RLE_DICTIONARY/.test(m.encodings);
    if (!spec.dict || !dictCol) check(!hasDict, `${name} ${col}: unexpected dictionary (${m.encodings})`);
    if (spec.dict && col === 'cust') check(hasDict, `${name} ${col}: no dictionary (${m.encodings})`);
  }
  if (spec.fallback) {
    const body = meta.filter((m) => m.path_in_schema === 'body');
    check(body.some((m) => /PLAIN/.test(m.encodings) && /RLE_DICTIONARY/.test(m.encodings)), `${name}: body has no dictionary-then-PLAIN chunk`);
  }
  if (spec.kv) {
    const kv = await rows(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${f}) ORDER BY 1`);
    check(kv.length === 2 && kv[0].k === 'iceberg.schema' && kv[0].v === '{"type":"struct"}' && kv[1].k === 'loams.test' && kv[1].v === 'yes', `${name}: key/value metadata ${JSON.stringify(kv)}`);
  }
}

console.log(`parquet-duckdb: ${checks} checks, ${failures} failed`);
process.exit(failures ? 1 : 0);
