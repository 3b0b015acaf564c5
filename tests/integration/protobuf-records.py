# protobuf-records.py - writes Protobuf messages with python3-protobuf (an
# independent encoder; the descriptors built at run time from protoc's
# FileDescriptorSet, no generated code): N messages of shop.Ticket in the
# Confluent wire format (byte 0, the schema id big-endian, the message
# indexes, the message) and N bare messages written with a newer version
# of the schema (v2: fields the registered v1 lacks), one base64 line
# each, plus one record not in the wire format and one whose field 1 has
# the wrong wire type; the cells each must decode
# to, as JSON lines; and each framed message bare in base64 (TEXT.txt).
#   protobuf-records.py V1.desc V2.desc ID N OUT.b64 EXPECTED.jsonl TEXT.txt
# With --check V1.desc TEXT.txt DECODED.txt: each `protoc --decode` output
# in DECODED.txt (separated by "#--" lines) parsed back equals its message.
import base64, json, struct, sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format


def message_class(path, name):
    fds = descriptor_pb2.FileDescriptorSet.FromString(open(path, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(name))


if sys.argv[1] == "--check":
    T = message_class(sys.argv[2], "shop.Ticket")
    bins = [base64.b64decode(l) for l in open(sys.argv[3]) if l.strip()]
    texts = open(sys.argv[4]).read().split("#--\n")[:-1]
    assert len(bins) == len(texts), (len(bins), len(texts))
    for b, t in zip(bins, texts):
        want, got = T.FromString(b), T()
        text_format.Parse(t, got)
        assert got == want, (t, want)
    print("protoc --decode: %d messages equal" % len(bins))
    sys.exit(0)

V1 = message_class(sys.argv[1], "shop.Ticket")
V2 = message_class(sys.argv[2], "shop.Ticket")
sid, n = int(sys.argv[3]), int(sys.argv[4])
out, exp, txt = open(sys.argv[5], "w"), open(sys.argv[6], "w"), open(sys.argv[7], "w")
COLORS = ["RED", "GREEN", "BLUE"]


def fill(m, i):
    m.id = i
    m.flag = i % 2 == 1
    m.delta = -i * 3 if i % 2 else i
    m.small = i * 1000
    m.big = i * 1234567890123
    m.ratio = i / 8.0
    m.score = i * 1.0000001 - 0.5
    m.name = "tick\u00e9t-%d \"q\"" % i
    m.payload = bytes([i % 256, 0, 255])
    m.color = i % 3
    m.tags.extend(range(i % 5))
    for j in range(i % 3):
        m.counts["k%d" % j] = i * 10 + j
    for j in range(i % 3):
        m.lines.add(sku="s%d" % j, qty=j * 2, color=(i + j) % 3)
    if i % 3 == 0:
        m.card = "c%d" % i
    elif i % 3 == 1:
        m.cash = -i
    m.at.seconds = 1700000000 + i
    m.at.nanos = (i % 1000) * 1000
    m.took.seconds = i
    m.took.nanos = 500000000 if i % 2 else 0
    if i % 4 != 0:
        m.maybe.value = i * 100
    if i % 5 != 0:
        m.label.value = "L%d" % i
    if i % 2 == 0:
        m.note = "n%d" % i
    if i % 3 != 2:
        m.main.sku = "m%d" % i
        m.main.qty = i


def expected(m):
    line = lambda l: {"sku": l.sku, "qty": l.qty, "color": COLORS[l.color]}
    return {
        "id": m.id, "flag": m.flag, "delta": m.delta, "small": m.small, "big": m.big,
        "ratio": m.ratio, "score": m.score, "name": m.name,
        "payload": base64.b64encode(m.payload).decode(), "color": COLORS[m.color],
        "tags": list(m.tags), "counts": dict(m.counts),
        "lines": [line(l) for l in m.lines],
        "card": m.card if m.WhichOneof("pay") == "card" else None,
        "cash": m.cash if m.WhichOneof("pay") == "cash" else None,
        "at": m.at.seconds * 1000000 + m.at.nanos // 1000,
        "took": m.took.seconds * 1000000 + m.took.nanos // 1000,
        "maybe": m.maybe.value if m.HasField("maybe") else None,
        "label": m.label.value if m.HasField("label") else None,
        "note": m.note if m.HasField("note") else None,
        "main": line(m.main) if m.HasField("main") else None,
    }


for i in range(1, n + 1):
    m = V1()
    fill(m, i)
    # the message indexes: the single byte 0 ([0]), or written out (count 1, index 0)
    idx = b"\0" if i % 2 else b"\x02\x00"
    out.write(base64.b64encode(b"\0" + struct.pack(">I", sid) + idx + m.SerializeToString()).decode() + "\n")
    exp.write(json.dumps(expected(m)) + "\n")
    txt.write(base64.b64encode(m.SerializeToString()).decode() + "\n")
for i in range(n + 1, 2 * n + 1):
    m = V2()
    fill(m, i)
    m.extra = "unknown to v1 %d" % i
    m.extras.extend([i, i + 1])
    m.more.sku = "x"
    bare = m.SerializeToString()
    m1 = V1.FromString(bare)  # what a v1 reader sees: the v2 fields are unknown
    out.write("B" + base64.b64encode(bare).decode() + "\n")
    exp.write(json.dumps(expected(m1)) + "\n")
out.write(base64.b64encode(b"{\"id\": 1}").decode() + "\n")
# field 1 (id, int64) written as length-delimited: a writer of another schema
out.write(base64.b64encode(b"\0" + struct.pack(">I", sid) + b"\0" + b"\x0a\x01x").decode() + "\n")
