#!/usr/bin/python3
# schema-registry-client.py - Confluent's own Python clients (Debian's
# python3-confluent-kafka) against the node's schema registry REST subset.
#
#   write URL TOKEN N RECORDS.b64 EXPECTED.jsonl
#     SchemaRegistryClient registers version 1 of orders-value (twice: the
#     same id), the Confluent MessageSerializer (the confluent_kafka.avro
#     serializer, on python3-avro: the AvroSerializer of
#     confluent_kafka.schema_registry needs fastavro, which Debian does not
#     package) writes N records under it, then auto-registers a compatible
#     version 2 and writes N more; an incompatible version is refused (409,
#     the reason naming the field) by both clients; get_schema,
#     get_latest_version, get_versions, get_subjects, lookup_schema,
#     test_compatibility, set_compatibility and get_compatibility
#     round-trip.  Each record goes to RECORDS.b64 (base64, one a line) and
#     its values to EXPECTED.jsonl.
#   read URL TOKEN STREAM.jsonl EXPECTED.jsonl
#     The MessageSerializer decodes the values `stream read --json` printed
#     (value_hex), fetching each writer schema by id from the registry;
#     every record must equal what was written.
# Both send the token as HTTP Basic (basic.auth.user.info = token:TOKEN).
import base64
import json
import sys

import avro.schema
from confluent_kafka.avro import CachedSchemaRegistryClient
from confluent_kafka.avro.error import ClientError
from confluent_kafka.avro.serializer.message_serializer import MessageSerializer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient, SchemaRegistryError

V1 = {
    "type": "record", "name": "Order", "namespace": "shop",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "qty", "type": "int"},
        {"name": "status", "type": {"type": "enum", "name": "Status",
                                    "symbols": ["NEW", "PAID", "SHIPPED"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
    ],
}
# version 2: a field with a default (compatible under BACKWARD)
V2 = dict(V1, fields=V1["fields"] + [{"name": "email", "type": "string", "default": "none"}])
# incompatible under BACKWARD: a field without a default
V3 = dict(V2, fields=V2["fields"] + [{"name": "coupon", "type": "string"}])
SUBJECT = "orders-value"


def conf(url, token):
    return {"url": url, "basic.auth.user.info": "token:" + token}


def legacy(url, token):
    return CachedSchemaRegistryClient(dict(conf(url, token),
                                           **{"basic.auth.credentials.source": "USER_INFO"}))


def record(i, version):
    r = {"id": i, "customer": "c%03d é" % i, "amount": i * 1.25, "qty": i % 7,
         "status": ["NEW", "PAID", "SHIPPED"][i % 3],
         "note": None if i % 2 else "note %d" % i, "tags": ["t%d" % k for k in range(i % 3)]}
    if version == 2:
        r["email"] = "u%d@example.com" % i
    return r


def write(url, token, n, out_b64, out_expected):
    client = SchemaRegistryClient(conf(url, token))
    id1 = client.register_schema(SUBJECT, Schema(json.dumps(V1), "AVRO"))
    again = client.register_schema(SUBJECT, Schema(json.dumps(V1, indent=2), "AVRO"))
    assert again == id1, ("the same schema got another id", id1, again)

    ser = MessageSerializer(legacy(url, token))
    b64 = open(out_b64, "w")
    expected = open(out_expected, "w")
    for version, schema in ((1, V1), (2, V2)):
        parsed = avro.schema.parse(json.dumps(schema))
        for i in range(n * (version - 1), n * version):
            rec = record(i, version)
            value = ser.encode_record_with_schema("orders", parsed, rec)
            assert value[0] == 0, value[:5]
            b64.write(base64.b64encode(value).decode() + "\n")
            if version == 1:
                rec["email"] = "none"  # what the link's reader (version 2) gives
            expected.write(json.dumps(rec) + "\n")
    b64.close()
    expected.close()

    latest = client.get_latest_version(SUBJECT)
    assert latest.version == 2 and latest.subject == SUBJECT, (latest.version, latest.subject)
    id2 = latest.schema_id
    assert id2 != id1, (id1, id2)
    assert json.loads(latest.schema.schema_str) == V2, latest.schema.schema_str
    assert json.loads(client.get_schema(id1).schema_str) == V1
    assert client.get_schema(id1).schema_type == "AVRO"
    assert client.get_versions(SUBJECT) == [1, 2], client.get_versions(SUBJECT)
    assert client.get_subjects() == [SUBJECT], client.get_subjects()
    found = client.lookup_schema(SUBJECT, Schema(json.dumps(V1), "AVRO"))
    assert (found.version, found.schema_id) == (1, id1), (found.version, found.schema_id)
    v1 = client.get_version(SUBJECT, 1)
    assert v1.schema_id == id1 and json.loads(v1.schema.schema_str) == V1

    # incompatible: refused by both clients, naming the field
    try:
        client.register_schema(SUBJECT, Schema(json.dumps(V3), "AVRO"))
        raise AssertionError("an incompatible schema was registered")
    except SchemaRegistryError as e:
        assert e.http_status_code == 409 and e.error_code == 409, (e.http_status_code, e.error_code)
        assert "coupon" in e.error_message and "BACKWARD" in e.error_message, e.error_message
        print("refused: " + e.error_message)
    try:
        ser.encode_record_with_schema("orders", avro.schema.parse(json.dumps(V3)),
                                      dict(record(0, 2), coupon="x"))
        raise AssertionError("the serializer registered an incompatible schema")
    except ClientError as e:
        assert "409" in str(e) and "coupon" in str(e), str(e)
    assert client.get_versions(SUBJECT) == [1, 2]

    # compatibility checks and rules
    assert client.test_compatibility(SUBJECT, Schema(json.dumps(V3), "AVRO")) is False
    assert client.test_compatibility(SUBJECT, Schema(json.dumps(V2), "AVRO"), version=1) is True
    assert client.get_compatibility(SUBJECT) == "BACKWARD"
    assert client.set_compatibility(SUBJECT, "NONE") == {"compatibility": "NONE"}
    assert client.get_compatibility(SUBJECT) == "NONE"
    assert client.test_compatibility(SUBJECT, Schema(json.dumps(V3), "AVRO")) is True
    assert client.set_compatibility(SUBJECT, "BACKWARD")["compatibility"] == "BACKWARD"
    assert client.test_compatibility(SUBJECT, Schema(json.dumps(V3), "AVRO")) is False
    assert client.get_compatibility() == "BACKWARD"
    client.set_compatibility(level="FULL")
    assert client.get_compatibility() == "FULL"
    # a subject created now takes the namespace's rule
    client.register_schema("audit-value", Schema(json.dumps(V1), "AVRO"))
    assert client.get_compatibility("audit-value") == "FULL"
    assert sorted(client.get_subjects()) == ["audit-value", SUBJECT]
    client.set_compatibility(level="BACKWARD")
    print("ok: ids %d and %d, %d records" % (id1, id2, 2 * n))


def read(url, token, stream_jsonl, expected_jsonl):
    ser = MessageSerializer(legacy(url, token))
    want = [json.loads(l) for l in open(expected_jsonl)]
    got = []
    for line in open(stream_jsonl):
        r = json.loads(line)
        value = bytes.fromhex(r["value_hex"]) if "value_hex" in r else r["value"].encode()
        got.append(ser.decode_message(value))
    got.sort(key=lambda r: r["id"])
    assert len(got) == len(want), (len(got), len(want))
    for w, g in zip(want, got):
        if "email" not in g:  # written with version 1
            g["email"] = "none"
        assert g == w, (g, w)
    print("ok: %d records decoded with schemas fetched by id" % len(got))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
    elif mode == "read":
        read(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        sys.exit("usage: schema-registry-client.py write|read ...")
