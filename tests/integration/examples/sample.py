"""sample.py - what the example checks share (tests/integration/examples.sh).

The runner writes one JSON document: {"partitions": P, "records": [every
record of support_tickets as `stream read --json` prints it], "targets":
{NAME: {"kind": "collection", "docs": [...]} | {"kind": "graph", "nodes":
[...], "edges": [...]} | {"kind": "table", "rows": [...]}}}.  A check is a
module with check(tickets, got) that raises AssertionError when the content
is not what the example promises for the shipped sample.
"""
import json


def fnv1a_partition(key, partitions):
    """The partition of a keyed record (docs/LINKS.md: FNV-1a 64 mod P)."""
    h = 14695981039346656037
    for b in key.encode():
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h % partitions


def by_key(items, key):
    out = {}
    for it in items:
        k = it[key]
        assert k not in out, ("twice", k)
        out[k] = it
    return out


def assert_docs(got, want, what):
    """got and want: lists of documents keyed by _pk; equal as sets."""
    g, w = by_key(got, "_pk"), by_key(want, "_pk")
    missing = sorted(set(w) - set(g))
    extra = sorted(set(g) - set(w))
    assert not missing and not extra, (what, "missing", missing[:5], "extra", extra[:5])
    for k in sorted(w):
        assert g[k] == w[k], (what, k, "got", g[k], "want", w[k])


def last_per_partition(tickets, partitions, key_of, value_of):
    """For each key: the values of the last record naming it in each
    partition (an upsert across partitions may end with any of them)."""
    last = {}
    for t in tickets:
        p = fnv1a_partition(t["id"], partitions)
        last.setdefault(key_of(t), {})[p] = value_of(t)
    return {k: [json.dumps(v, sort_keys=True) for v in per.values()]
            for k, per in last.items()}
