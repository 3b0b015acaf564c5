#!/usr/bin/python3
"""kafka-produce.py - a real Kafka client (confluent-kafka) producing to
the mock cluster of tests/kafka-mock for the Kafka tests and the bench.

    kafka-produce.py BOOTSTRAP TOPIC FIRST COUNT [--aborted] [--headers]

Produces COUNT keyed JSON records, ids FIRST..FIRST+COUNT-1: key
"k-<id>", value {"id": "k-<id>", "n": <id>, "pad": "..."}.  With
--aborted, in one transaction that is then aborted (a transactional
producer, so a read_committed consumer must skip them).  Waits until the
brokers acknowledged every record; prints "produced COUNT".
"""
import json
import sys

from confluent_kafka import Producer


def main():
    bootstrap, topic, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    aborted = "--aborted" in sys.argv[5:]
    headers = "--headers" in sys.argv[5:]
    conf = {"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all",
            "enable.idempotence": True}
    if aborted:
        conf["transactional.id"] = "loams-test-aborted"
    p = Producer(conf)
    errors = []

    def done(err, msg):
        if err is not None:
            errors.append(str(err))

    if aborted:
        p.init_transactions(30)
        p.begin_transaction()
    for i in range(first, first + count):
        key = "k-%d" % i
        value = json.dumps({"id": key, "n": i, "pad": "x" * (i % 50)})
        hdrs = [("src", b"kafka"), ("i", str(i).encode())] if headers else None
        while True:
            try:
                p.produce(topic, value=value.encode(), key=key.encode(), headers=hdrs,
                          on_delivery=done)
                break
            except BufferError:
                p.poll(0.1)
        p.poll(0)
    if aborted:
        p.flush(30)
        p.abort_transaction(30)
    left = p.flush(60)
    if left or errors:
        print("not delivered: %d, errors: %s" % (left, errors[:3]), file=sys.stderr)
        return 1
    print("produced %d" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
