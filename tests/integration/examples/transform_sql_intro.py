"""docs/TRANSFORM-SQL.md, the first example: every ticket but those of
priority 4, with its subject and body, and ts the record's timestamp."""
from sample import assert_docs


def check(tickets, got):
    ts = {r["key"]: r["timestamp"] for r in got["records"]}
    want = [{"_pk": t["id"], "subject": t["subject"], "body": t["body"], "ts": ts[t["id"]]}
            for t in tickets if t["priority"] != 4]
    assert 0 < len(want) < len(tickets)
    assert_docs(got["targets"]["default.tickets"]["docs"], want, "tickets")
    return "%d documents of %d tickets" % (len(want), len(tickets))
