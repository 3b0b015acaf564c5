-- description: PII redaction: masks e-mail addresses and phone numbers in every text field of a JSON record
-- version: 1.0.0
--
-- CREATE LINK tickets_redacted FROM STREAM support_tickets
--   INTO COLLECTION tickets_redacted
--   TRANSFORM LUA 'pii_redact';
--
-- Input: a record whose value is a JSON object.  Output: one row with the
-- record key as _pk and every member of the object, with the text of every
-- string (nested ones too) redacted:
--   "jane.doe@example.com"  -> "j***@example.com"
--   "+1 (555) 123-4567"     -> "***-***-4567"
-- A phone number is a run of 9 to 15 digits written with spaces, dots,
-- dashes or parentheses, optionally after '+'; dates such as 2026-09-01
-- have too few digits to match.  pii_masked counts the masks applied.
-- Nested objects stay objects (JSON columns), arrays stay lists.

local function mask_email(user, domain)
  return user:sub(1, 1) .. "***@" .. domain
end

local function mask_phone(text)
  local digits = text:gsub("%D", "")
  if #digits < 9 or #digits > 15 then
    return nil -- keep the text
  end
  return "***-***-" .. digits:sub(-4)
end

local function redact_text(s)
  local n1, n2
  s, n1 = s:gsub("([%w%.%%%+%-_]+)@([%w%-]+%.[%w%.%-]+)", mask_email)
  local masked = 0
  s = s:gsub("%+?%(?%d[%d%s%.%-%(%)]+%d", function(p)
    local m = mask_phone(p)
    if m then masked = masked + 1 end
    return m
  end)
  n2 = masked
  return s, n1 + n2
end

-- Redacts v (a string, or a table of them); returns the new value and the
-- number of masks.
local function redact(v)
  if type(v) == "string" then
    return redact_text(v)
  elseif type(v) == "table" then
    local out, total = {}, 0
    if loams.is_array(v) then
      out = loams.array()
    end
    for k, item in pairs(v) do
      local r, n = redact(item)
      out[k] = r
      total = total + n
    end
    return out, total
  end
  return v, 0
end

function transform(rec)
  local ok, doc = pcall(loams.json_decode, rec.value)
  if not ok or type(doc) ~= "table" or loams.is_array(doc) then
    error("the record value is not a JSON object", 0)
  end
  local row, total = redact(doc)
  row._pk = rec.key
  row.pii_masked = total
  return row
end
