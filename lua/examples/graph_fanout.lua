-- description: Graph fan-out: one support ticket becomes ticket, customer and tag nodes with OPENED and TAGGED edges
-- version: 1.1.0
--
-- CREATE LINK tickets_graph FROM STREAM support_tickets
--   INTO GRAPH tickets_g
--   TRANSFORM LUA 'graph_fanout';
--
-- Input: a support ticket as in the shipped sample (samples/support-tickets.jsonl):
--   {"id": "T-00042", "subject": "...", "body": "...", "priority": 1..4,
--    "tags": ["billing", ...], "customer": {"id": 8906, "name": "...", "tier": "pro"},
--    "created_at": "2026-11-05T01:15:00Z"}
-- Ids may be strings ("T-00042") or integers (8906).  Output: a list of rows
-- for a graph target:
--   nodes  {_node = id, _label = label, ...properties}
--            ticket:<id>     Ticket    subject, priority
--            customer:<id>   Customer  name, tier
--            tag:<name>      Tag       name
--   edges  {_src = id, _dst = id, _type = type}
--            customer -OPENED-> ticket
--            ticket   -TAGGED-> tag     (once per distinct tag)
-- A ticket without an id fails (on_error decides); one without a customer
-- id gets no customer node.

-- The text of an id: an integer (8906, or 8906.0 from another encoder) as
-- its digits, a non-empty string as it is; anything else is no id (nil).
local function id_text(v)
  if math.type(v) ~= nil then
    local i = math.tointeger(v)
    return i and tostring(i)
  end
  if type(v) == "string" and v ~= "" then
    return v
  end
  return nil
end

function transform(rec)
  local ok, t = pcall(loams.json_decode, rec.value)
  if not ok or type(t) ~= "table" or loams.is_array(t) then
    error("the record value is not a JSON object", 0)
  end
  local id = id_text(t.id)
  if id == nil then
    error("the ticket has no id", 0)
  end
  local ticket = "ticket:" .. id
  local rows = {
    { _node = ticket, _label = "Ticket", subject = t.subject, priority = t.priority },
  }
  local c = t.customer
  local cid = type(c) == "table" and id_text(c.id)
  if cid then
    local customer = "customer:" .. cid
    rows[#rows + 1] = { _node = customer, _label = "Customer", name = c.name, tier = c.tier }
    rows[#rows + 1] = { _src = customer, _dst = ticket, _type = "OPENED" }
  end
  local seen = {}
  for _, tag in ipairs(type(t.tags) == "table" and t.tags or {}) do
    if type(tag) == "string" and tag ~= "" and not seen[tag] then
      seen[tag] = true
      local node = "tag:" .. tag
      rows[#rows + 1] = { _node = node, _label = "Tag", name = tag }
      rows[#rows + 1] = { _src = ticket, _dst = node, _type = "TAGGED" }
    end
  end
  return rows
end
