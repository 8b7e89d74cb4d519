-- Gantry's fast lane: a baked send delivered to Lua listeners from Lua.
-- Run once per Lua state (full standard library) with the runtime's
-- helpers; see fast.rs for the contract this half keeps.
local msgh, fail, alive = ...
local load, select, rawequal, xpcall, pcall = load, select, rawequal, xpcall, pcall
local mtype, type, utf8len, concat = math.type, type, utf8.len, table.concat

-- E[1]: the hub's epoch (written by the runtime when it moves).
-- E[2]: reasons for the Lua side to keep off the lane: a coroutine
--       running (a listener must not yield the sender's coroutine), or
--       nesting at MAX_DEPTH.
-- E[3]: how many fast sends are running, nested.
local E = { 0, 0, 0 }
local MAX_DEPTH = 8

local function block() E[2] = E[2] + 1 end
local function unblock(...)
  E[2] = E[2] - 1
  return ...
end

-- One argument check per kind letter (fast.rs `kind_letter`): on any doubt
-- the send goes the slow way with the arguments as they came, and that
-- converts, refuses or records exactly as the hub does. An integer for a
-- float parameter becomes a float, as the hub converts it.
-- (`@`: the argument; `$`: the call's arguments, for the slow call.)
local CHECK = {
  i = "if mtype(@) ~= 'integer' then return slow($) end",
  f = "do local t = mtype(@) if t ~= 'float' then if t == 'integer' then @ = @ + 0.0 else return slow($) end end end",
  b = "if @ ~= true and @ ~= false then return slow($) end",
  s = "if type(@) ~= 'string' or not utf8len(@) then return slow($) end",
}

-- The delivery code for one (source or not, parameter kinds) is compiled
-- once and shared by every key of that shape.
local builders = {}

local function builder(sourced, kinds)
  local name = (sourced and "o" or "-") .. kinds
  local b = builders[name]
  if b then return b end
  local params, checks = {}, {}
  for i = 1, #kinds do params[i] = "a" .. i end
  local plist = concat(params, ", ")
  local all = sourced and "obj, ..." or "..."
  for i = 1, #kinds do
    local k = kinds:sub(i, i)
    checks[i] = (CHECK[k]:gsub("@", "a" .. i):gsub("%$", all))
  end
  local args = plist ~= "" and ", " .. plist or ""
  local src = {
    "local mtype, type, utf8len, select, xpcall, pcall, E, MAX_DEPTH, msgh, fail, alive = ...",
    "return function(fns, n, snap, slow, epoch)",
    "  local at = 0",
    "  local function run(" .. plist .. ")",
    "    for i = at + 1, n do",
    "      at = i",
    "      if E[1] == epoch or alive(snap, i) then fns[i](" .. plist .. ") end",
    "    end",
    "  end",
    "  return function(" .. all .. ")",
    -- Exactly the key's arity: fewer or more is for the hub to judge.
    "    if select('#', ...) ~= " .. #kinds .. " then return slow(" .. all .. ") end",
    plist ~= "" and "    local " .. plist .. " = ..." or "",
    concat(checks, "\n"),
    "    local outer, depth = at, E[3] + 1",
    "    at = 0",
    "    E[3] = depth",
    "    if depth >= MAX_DEPTH then E[2] = E[2] + 1 end",
    "    local ok, err = xpcall(run, msgh" .. args .. ")",
    "    while not ok do",
    "      local i = at",
    "      pcall(fail, snap, i, err)",
    "      if i == 0 or i >= n then break end",
    "      ok, err = xpcall(run, msgh" .. args .. ")",
    "    end",
    "    if depth >= MAX_DEPTH then E[2] = E[2] - 1 end",
    "    E[3] = depth - 1",
    "    at = outer",
    "  end",
    "end",
  }
  b = load(concat(src, "\n"), "=gantry-fast", "t")(
    mtype, type, utf8len, select, xpcall, pcall, E, MAX_DEPTH, msgh, fail, alive)
  builders[name] = b
  return b
end

-- The baked send for one (function, key). `slow` is the hub's way (any
-- arguments); `fetch(obj)` asks the hub for the key's lane from that
-- source: (epoch, kinds, listener functions, snapshot) or nil. The lane
-- is kept while the epoch stands and the source is the same value.
local function make_send(slow, fetch, sourced)
  local epoch, src, go = -2, nil, slow
  local function refresh(...)
    if E[2] ~= 0 then return slow(...) end
    local e, kinds, fns, snap = fetch((...))
    if e ~= nil and e == E[1] then
      go = builder(sourced, kinds)(fns, #fns, snap, slow, e)
    else
      go = slow
    end
    epoch, src = E[1], (...)
    return go(...)
  end
  if sourced then
    return function(obj, ...)
      if E[1] == epoch and E[2] == 0 and rawequal(obj, src) then return go(obj, ...) end
      return refresh(obj, ...)
    end
  end
  return function(...)
    if E[1] == epoch and E[2] == 0 then return go(...) end
    return refresh(...)
  end
end

return { E = E, block = block, unblock = unblock, make_send = make_send }
