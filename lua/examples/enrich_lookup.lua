-- description: Enrichment: adds the support level, SLA and due time from the customer's tier, and a routing queue from the ticket's tags
-- version: 1.1.0
--
-- CREATE LINK tickets_enriched FROM STREAM support_tickets
--   INTO COLLECTION tickets_enriched
--   TRANSFORM LUA 'enrich_lookup';
--
-- Input: a support ticket as in the shipped sample (samples/support-tickets.jsonl):
--   {"id": "T-00042", "subject": "...", "priority": 1..4 (1 is the most
--    pressing), "tags": ["billing", ...], "customer": {"id": 8906,
--    "name": "...", "tier": "free" | "pro" | "enterprise"},
--    "created_at": "2026-11-05T01:15:00Z"}
-- Output: one row per ticket with the ticket's fields and what two lookup
-- tables say about it.  A tier the table does not know gets the "unknown"
-- entry; a ticket whose tags match no queue goes to "general"; a ticket
-- without a readable created_at gets no created_at and no due_at.

columns = {
  "_pk string", "ticket_id string", "subject string", "priority int64",
  "customer string", "tier string", "support_level string", "sla_hours int64",
  "queue string", "created_at timestamp", "due_at timestamp",
}

local tiers = {
  free       = { level = "community", sla_hours = 72 },
  pro        = { level = "standard",  sla_hours = 24 },
  enterprise = { level = "premium",   sla_hours = 8 },
}
local unknown_tier = { level = "unknown", sla_hours = 48 }

-- The first tag that has a queue decides.
local queues = {
  billing = "finance", network = "infrastructure", hardware = "infrastructure",
  software = "engineering", regression = "engineering", onboarding = "customer-success",
}

-- Priority 1 gets half the SLA, priority 4 twice as much.
local sla_factor = { [1] = 0.5, [4] = 2 }

function transform(rec)
  local ok, t = pcall(loams.json_decode, rec.value)
  if not ok or type(t) ~= "table" or loams.is_array(t) then
    error("the record value is not a JSON object", 0)
  end
  local customer = type(t.customer) == "table" and t.customer or {}
  local tier = tiers[customer.tier] or unknown_tier
  local queue = "general"
  for _, tag in ipairs(type(t.tags) == "table" and t.tags or {}) do
    if queues[tag] then
      queue = queues[tag]
      break
    end
  end
  local priority = math.type(t.priority) and math.tointeger(t.priority)
  local sla = math.tointeger(tier.sla_hours * (sla_factor[priority] or 1)) or tier.sla_hours
  local created = loams.time_parse(t.created_at)
  return {
    _pk = rec.key,
    ticket_id = t.id ~= nil and tostring(t.id) or nil,
    subject = t.subject,
    priority = priority,
    customer = customer.name,
    tier = customer.tier,
    support_level = tier.level,
    sla_hours = sla,
    queue = queue,
    created_at = created,
    due_at = created and created + sla * 3600 * 1000000,
  }
end
