"""docs/AGGREGATES.md, the first example: one document per customer name
with the ticket count, the sum, minimum and mean of the priorities, the
last record timestamp (exact), the distinct subjects (HyperLogLog, within
3 x 0.81 %) and the median body length (DDSketch, within 1 %)."""


def check(tickets, got):
    ts = {r["key"]: r["timestamp"] for r in got["records"]}
    groups = {}
    for t in tickets:
        groups.setdefault(t["customer"]["name"], []).append(t)
    docs = {d["_pk"]: d for d in got["targets"]["default.customers"]["docs"]}
    assert set(docs) == set(groups), ("groups", sorted(set(docs) ^ set(groups))[:5])
    for name, ts_of in groups.items():
        d = docs[name]
        pr = [t["priority"] for t in ts_of]
        exact = {"tickets": len(ts_of), "priority_sum": sum(pr), "top_priority": min(pr),
                 "mean_priority": sum(pr) / len(pr),
                 "last_seen": max(ts[t["id"]] for t in ts_of)}
        for k, v in exact.items():
            assert d[k] == v, (name, k, "got", d[k], "want", v)
        distinct = len({t["subject"] for t in ts_of})
        assert abs(d["subjects"] - distinct) <= 0.0243 * distinct + 0.5, (name, d["subjects"],
                                                                          distinct)
        lens = sorted(len(t["body"]) for t in ts_of)
        med = lens[int(0.5 * (len(lens) - 1))]
        assert abs(d["median_body"] - med) <= 0.01 * med, (name, d["median_body"], med)
        assert set(d) == {"_pk", "tickets", "priority_sum", "top_priority", "last_seen",
                          "mean_priority", "subjects", "median_body"}, sorted(d)
    return "%d customers of %d tickets" % (len(docs), len(tickets))
