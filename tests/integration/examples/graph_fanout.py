"""lua/examples/graph_fanout.lua on the sample: for every ticket a Ticket
node, a Customer node and an OPENED edge, a Tag node per tag and a TAGGED
edge per distinct tag; a customer named by tickets in several partitions
carries the name and tier of the last of them in one of those partitions."""
import json
from sample import last_per_partition


def expect(tickets, partitions):
    nodes, edges = {}, set()
    for t in tickets:
        tid = "ticket:" + t["id"]
        nodes[tid] = [json.dumps({"id": tid, "label": "Ticket", "properties": {
            "subject": t["subject"], "priority": t["priority"]}}, sort_keys=True)]
        cid = "customer:%d" % t["customer"]["id"]
        edges.add((cid, "OPENED", tid))
        for tag in t["tags"]:
            nodes["tag:" + tag] = [json.dumps({"id": "tag:" + tag, "label": "Tag",
                                               "properties": {"name": tag}}, sort_keys=True)]
            edges.add((tid, "TAGGED", "tag:" + tag))
    customers = last_per_partition(
        tickets, partitions, lambda t: "customer:%d" % t["customer"]["id"],
        lambda t: {"id": "customer:%d" % t["customer"]["id"], "label": "Customer",
                   "properties": {"name": t["customer"]["name"], "tier": t["customer"]["tier"]}})
    nodes.update(customers)
    return nodes, edges


def check_graph(tickets, partitions, g):
    want_nodes, want_edges = expect(tickets, partitions)
    got_nodes = {n["id"]: json.dumps(n, sort_keys=True) for n in g["nodes"]}
    assert len(got_nodes) == len(g["nodes"]), "a node listed twice"
    assert set(got_nodes) == set(want_nodes), (
        "nodes", sorted(set(want_nodes) - set(got_nodes))[:5],
        sorted(set(got_nodes) - set(want_nodes))[:5])
    for k, v in got_nodes.items():
        assert v in want_nodes[k], ("node", k, v, want_nodes[k])
    got_edges = [(e["src"], e["type"], e["dst"]) for e in g["edges"]]
    assert all(e["properties"] == {} for e in g["edges"])
    assert len(set(got_edges)) == len(got_edges), "an edge listed twice"
    assert set(got_edges) == want_edges, (
        "edges", sorted(want_edges - set(got_edges))[:5], sorted(set(got_edges) - want_edges)[:5])
    return len(got_nodes), len(got_edges)


def check(tickets, got):
    return "%d nodes, %d edges" % check_graph(tickets, got["partitions"],
                                              got["targets"]["default.tickets_g"])
