-- description: Enrichment: adds the support tier, SLA and due time from the customer's plan, and a routing queue from the ticket's tags
-- version: 1.0.0
--
-- TRANSFORM LUA 'enrich_lookup'
--
-- Input: a support ticket, JSON: {"id", "subject", "priority", "tags": [...],
-- "customer": {"id", "plan", ...}, "created_at": "2026-09-01"}.
-- Output: one row per ticket with the ticket's fields and what two lookup
-- tables say about it.  A plan the table does not know gets the "unknown"
-- entry; a ticket whose tags match no queue goes to "general".

columns = {
  "_pk string", "ticket_id int64", "subject string", "priority string",
  "plan string", "tier string", "sla_hours int64", "queue string",
  "created_at timestamp", "due_at timestamp",
}

local plans = {
  free       = { tier = "community", sla_hours = 72 },
  team       = { tier = "standard",  sla_hours = 24 },
  business   = { tier = "priority",  sla_hours = 8 },
  enterprise = { tier = "premium",   sla_hours = 2 },
}
local unknown_plan = { tier = "unknown", sla_hours = 48 }

-- The first tag that has a queue decides.
local queues = {
  billing = "finance", ["2fa"] = "security", login = "security",
  api = "platform", webhooks = "platform", export = "platform", performance = "platform",
  mobile = "apps", dashboard = "apps", bug = "engineering",
}

-- urgent tickets get half the SLA
local sla_factor = { urgent = 0.5 }

function transform(rec)
  local t = loams.json_decode(rec.value)
  local customer = t.customer or {}
  local plan = plans[customer.plan] or unknown_plan
  local queue = "general"
  for _, tag in ipairs(t.tags or {}) do
    if queues[tag] then
      queue = queues[tag]
      break
    end
  end
  local created = loams.time_parse(t.created_at or "")
  local sla = math.tointeger(plan.sla_hours * (sla_factor[t.priority] or 1)) or plan.sla_hours
  return {
    _pk = rec.key,
    ticket_id = t.id,
    subject = t.subject,
    priority = t.priority,
    plan = customer.plan,
    tier = plan.tier,
    sla_hours = sla,
    queue = queue,
    created_at = created,
    due_at = created and created + sla * 3600 * 1000000,
  }
end
