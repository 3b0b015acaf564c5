"""lua/examples/enrich_lookup.lua on the sample: one document per ticket
with its tier's support level and SLA (halved for priority 1, doubled for
priority 4), the queue of its first tag that has one, created_at and due_at
in microseconds."""
from datetime import datetime
from sample import assert_docs

TIERS = {"free": ("community", 72), "pro": ("standard", 24), "enterprise": ("premium", 8)}
QUEUES = {"billing": "finance", "network": "infrastructure", "hardware": "infrastructure",
          "software": "engineering", "regression": "engineering",
          "onboarding": "customer-success"}


def check(tickets, got):
    want = []
    for t in tickets:
        level, sla = TIERS.get(t["customer"]["tier"], ("unknown", 48))
        sla = {1: sla // 2, 4: sla * 2}.get(t["priority"], sla)
        queue = next((QUEUES[g] for g in t["tags"] if g in QUEUES), "general")
        created = int(datetime.fromisoformat(t["created_at"].replace("Z", "+00:00"))
                      .timestamp()) * 1000000
        want.append({"_pk": t["id"], "ticket_id": t["id"], "subject": t["subject"],
                     "priority": t["priority"], "customer": t["customer"]["name"],
                     "tier": t["customer"]["tier"], "support_level": level,
                     "sla_hours": sla, "queue": queue, "created_at": created,
                     "due_at": created + sla * 3600 * 1000000})
    docs = got["targets"]["default.tickets_enriched"]["docs"]
    assert_docs(docs, want, "tickets_enriched")
    queues = {d["queue"] for d in docs}
    assert len(queues) >= 4, ("the lookup gave too few queues", queues)
    return "%d documents, queues %s" % (len(docs), ",".join(sorted(queues)))
