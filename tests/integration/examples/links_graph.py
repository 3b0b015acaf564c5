"""docs/LINKS.md, INTO GRAPH: the graph_fanout link with dead letters and
compaction options gives the same graph as lua/examples/graph_fanout.lua."""
from graph_fanout import check_graph


def check(tickets, got):
    return "%d nodes, %d edges" % check_graph(tickets, got["partitions"],
                                              got["targets"]["default.tickets_g"])
