"""docs/TRANSFORM-LUA.md, the first example: the graph of graph_fanout.lua
and a collection of every ticket's subject and body, with ts the record's
timestamp."""
from graph_fanout import check_graph
from sample import assert_docs


def check(tickets, got):
    ts = {r["key"]: r["timestamp"] for r in got["records"]}
    want = [{"_pk": t["id"], "subject": t["subject"], "body": t["body"], "ts": ts[t["id"]]}
            for t in tickets]
    assert_docs(got["targets"]["default.tickets"]["docs"], want, "tickets")
    n, e = check_graph(tickets, got["partitions"], got["targets"]["default.tickets_g"])
    return "%d documents; %d nodes, %d edges" % (len(want), n, e)
