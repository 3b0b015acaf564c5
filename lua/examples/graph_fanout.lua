-- description: Graph fan-out: one support ticket becomes ticket, customer and tag nodes with OPENED and TAGGED edges
-- version: 1.0.0
--
-- TRANSFORM LUA 'graph_fanout'    (INTO GRAPH ns.g)
--
-- Input: a support ticket, JSON (see enrich_lookup.lua).  Output: a list
-- of rows for a graph target:
--   nodes  {_node = id, _label = label, ...properties}
--            ticket:<id>     Ticket    subject, priority
--            customer:<id>   Customer  name, plan
--            tag:<name>      Tag       name
--   edges  {_src = id, _dst = id, _type = type}
--            customer -OPENED-> ticket
--            ticket   -TAGGED-> tag     (once per distinct tag)

function transform(rec)
  local t = loams.json_decode(rec.value)
  if t.id == nil then
    error("the ticket has no id", 0)
  end
  local ticket = "ticket:" .. math.tointeger(t.id)
  local rows = {
    { _node = ticket, _label = "Ticket", subject = t.subject, priority = t.priority },
  }
  local c = t.customer
  if c and c.id ~= nil then
    local customer = "customer:" .. math.tointeger(c.id)
    rows[#rows + 1] = { _node = customer, _label = "Customer", name = c.name, plan = c.plan }
    rows[#rows + 1] = { _src = customer, _dst = ticket, _type = "OPENED" }
  end
  local seen = {}
  for _, tag in ipairs(t.tags or {}) do
    if not seen[tag] then
      seen[tag] = true
      local node = "tag:" .. tag
      rows[#rows + 1] = { _node = node, _label = "Tag", name = tag }
      rows[#rows + 1] = { _src = ticket, _dst = node, _type = "TAGGED" }
    end
  end
  return rows
end
