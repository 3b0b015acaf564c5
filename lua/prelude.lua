-- prelude.lua - loaded into every Lua transform state before the script.
--
-- The plugin (plugins/transform-lua) compiles this file in as text and runs
-- it with the `loams` table as its argument, after it has put its C
-- functions there: json_decode, json_encode, json_get, sha256, log, array,
-- is_array and null.  What follows is written in Lua: time parsing and
-- formatting, and log shorthands.  docs/TRANSFORM-LUA.md documents all of
-- it.

local loams = ...

local tointeger = math.tointeger
local format = string.format

-- ---- calendar arithmetic (proleptic Gregorian, UTC) ----
-- Days from 1970-01-01 to the date, and back (H. Hinnant's algorithms).

local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doy = (153 * mp + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  return era * 146097 + doe - 719468
end

local function civil_from_days(z)
  z = z + 719468
  local era = z // 146097
  local doe = z - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local y = yoe + era * 400
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then y = y + 1 end
  return y, m, d
end

local US_PER_DAY = 86400 * 1000000

local function bad_time(s)
  return nil, format("not an ISO-8601 time: %q (expected YYYY-MM-DD, optionally "
    .. "followed by THH:MM[:SS[.ffffff]] and Z or +HH:MM)", tostring(s))
end

-- loams.time_parse(text) -> microseconds since 1970-01-01T00:00:00Z, or
-- nil and a message.  Accepts "2026-09-01", "2026-09-01T12:30",
-- "2026-09-01T12:30:05.25Z", "2026-09-01 12:30:05+02:00", "...-0530",
-- "...+02"; no zone means UTC.  Fractions beyond microseconds are cut.
function loams.time_parse(s)
  if type(s) ~= "string" then
    return bad_time(s)
  end
  local y, mo, d, rest = s:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)(.*)$")
  if not y then
    return bad_time(s)
  end
  y, mo, d = tointeger(tonumber(y)), tointeger(tonumber(mo)), tointeger(tonumber(d))
  local h, mi, sec, us = 0, 0, 0, 0
  if rest ~= "" then
    local hh, mm, tail = rest:match("^[Tt ](%d%d):(%d%d)(.*)$")
    if not hh then
      return bad_time(s)
    end
    h, mi, rest = tointeger(tonumber(hh)), tointeger(tonumber(mm)), tail
    local ss, tail2 = rest:match("^:(%d%d)(.*)$")
    if ss then
      sec, rest = tointeger(tonumber(ss)), tail2
      local frac, tail3 = rest:match("^[.,](%d+)(.*)$")
      if frac then
        frac = (frac .. "000000"):sub(1, 6)
        us, rest = tointeger(tonumber(frac)), tail3
      end
    end
  end
  local offset = 0
  if rest == "Z" or rest == "z" or rest == "" then
    offset = 0
  else
    local sign, oh, om = rest:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then
      sign, oh = rest:match("^([+-])(%d%d)$")
      om = "00"
    end
    if not sign then
      return bad_time(s)
    end
    oh, om = tointeger(tonumber(oh)), tointeger(tonumber(om))
    if oh > 23 or om > 59 then
      return bad_time(s)
    end
    offset = (oh * 60 + om) * 60
    if sign == "-" then offset = -offset end
  end
  if mo < 1 or mo > 12 or d < 1 or h > 23 or mi > 59 or sec > 59 then
    return bad_time(s)
  end
  local days = days_from_civil(y, mo, d)
  local cy, cm, cd = civil_from_days(days)
  if cy ~= y or cm ~= mo or cd ~= d then
    return bad_time(s) -- e.g. February 30
  end
  return ((days * 86400 + h * 3600 + mi * 60 + sec - offset) * 1000000) + us
end

-- loams.time_format(us) -> "YYYY-MM-DDTHH:MM:SSZ", with ".ffffff" when the
-- time has a fraction of a second.  `us` is an integer (or a float with an
-- integral value) of microseconds since 1970-01-01T00:00:00Z.
function loams.time_format(us)
  local t = tointeger(us)
  if t == nil then
    error(format("loams.time_format: expected whole microseconds, got %s", tostring(us)), 2)
  end
  local days = t // US_PER_DAY
  local rem = t - days * US_PER_DAY
  local y, m, d = civil_from_days(days)
  if y < 0 or y > 9999 then
    error(format("loams.time_format: %d is outside years 0000-9999", t), 2)
  end
  local secs = rem // 1000000
  local frac = rem - secs * 1000000
  local text = format("%04d-%02d-%02dT%02d:%02d:%02d", y, m, d,
    secs // 3600, secs // 60 % 60, secs % 60)
  if frac ~= 0 then
    text = text .. format(".%06d", frac)
  end
  return text .. "Z"
end

-- ---- log shorthands: loams.log(level, message) with the level fixed ----

local log = loams.log
function loams.log_error(msg) log("error", msg) end
function loams.log_warn(msg) log("warn", msg) end
function loams.log_info(msg) log("info", msg) end
function loams.log_debug(msg) log("debug", msg) end
