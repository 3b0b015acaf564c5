# avro-records.py - writes Avro records with python3-avro (an independent
# encoder) in the Confluent wire format (byte 0, the schema id big-endian,
# the Avro binary value): N records with schema v1 (id 1) and N with v2
# (id 2), one base64 line each, plus one record that is not in the wire
# format; and the values each record must decode to, as JSON lines.
#   avro-records.py V1.avsc V2.avsc N OUT.b64 EXPECTED.jsonl
import base64, datetime, decimal, io, json, struct, sys

import avro.io
import avro.schema

v1 = avro.schema.parse(open(sys.argv[1]).read())
v2 = avro.schema.parse(open(sys.argv[2]).read())
n = int(sys.argv[3])
utc = datetime.timezone.utc


def encode(schema, sid, rec):
    buf = io.BytesIO()
    buf.write(b"\0" + struct.pack(">I", sid))
    avro.io.DatumWriter(schema).write(rec, avro.io.BinaryEncoder(buf))
    return buf.getvalue()


def record(i, version):
    r = {
        "id": i,
        "flag": i % 2 == 0,
        "qty": (i * 7919) % 100000 - 50000,
        "big": (i * 1234567890123) * (-1 if i % 3 else 1),
        "ratio": float(i) / 8.0,
        "score": i * 1.0000001 - 0.5,
        "payload": bytes([i % 256, 0, 255, (i * 3) % 256]),
        "name": "tick\u00e9t-%d \"q\"" % i,
        "color": ["RED", "GREEN", "BLUE"][i % 3],
        "md5": bytes((i + k) % 256 for k in range(4)),
        "price": decimal.Decimal(i * 101 - 5000).scaleb(-2),
        "rate": decimal.Decimal(i * 3 - 7).scaleb(-3),
        "day": datetime.date(2020, 1, 1) + datetime.timedelta(days=i),
        "at_ms": datetime.time(1, 2, 3, (i % 1000) * 1000),
        "at_us": datetime.time(23, 59, 58, i % 1000000),
        "ts_ms": datetime.datetime(2024, 5, 6, 7, 8, 9, (i % 1000) * 1000, tzinfo=utc),
        "ts_us": datetime.datetime(2001, 2, 3, 4, 5, 6, i % 1000000, tzinfo=utc),
        "note": None if i % 4 == 0 else "note %d" % i,
        "tags": list(range(i % 5)),
        "attrs": {"k%d" % j: "v%d" % (i + j) for j in range(i % 3)},
        "addr": {"city": "c%d" % i, "zip": i % 100},
    }
    if version == 2:
        r["email"] = "u%d@example.com" % i
    return r


def expected(r, version):
    ms = lambda t: ((t.hour * 60 + t.minute) * 60 + t.second) * 1000000 + t.microsecond
    epoch = datetime.datetime(1970, 1, 1, tzinfo=utc)
    us = lambda d: (d - epoch) // datetime.timedelta(microseconds=1)
    return {
        "id": r["id"], "flag": r["flag"], "qty": r["qty"], "big": r["big"],
        "ratio": r["ratio"], "score": r["score"],
        "payload": base64.b64encode(r["payload"]).decode(), "name": r["name"],
        "color": r["color"], "md5": base64.b64encode(r["md5"]).decode(),
        "price": str(r["price"]), "rate": str(r["rate"]),
        "day": us(datetime.datetime(r["day"].year, r["day"].month, r["day"].day, tzinfo=utc)),
        "at_ms": ms(r["at_ms"]) // 1000 * 1000, "at_us": ms(r["at_us"]),
        "ts_ms": us(r["ts_ms"]), "ts_us": us(r["ts_us"]), "note": r["note"],
        "tags": r["tags"], "attrs": r["attrs"], "addr": r["addr"],
        "email": r["email"] if version == 2 else "none",
    }


with open(sys.argv[4], "w") as out, open(sys.argv[5], "w") as exp:
    for version, schema in ((1, v1), (2, v2)):
        for k in range(n):
            i = (version - 1) * n + k
            r = record(i, version)
            out.write(base64.b64encode(encode(schema, version, r)).decode() + "\n")
            exp.write(json.dumps(expected(r, version), sort_keys=True) + "\n")
    out.write(base64.b64encode(b'{"not":"avro"}').decode() + "\n")
