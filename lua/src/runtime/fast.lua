-- Gantry's fast lane: a baked send delivered to Lua listeners from Lua.
-- Run once per Lua state with the runtime's helpers; see fast.rs for the
-- contract, and fast/dispatch.rs for `dispatch(lane, ...)`, which checks
-- the arguments and calls the listeners (false: it called nothing).
local dispatch = ...
local rawequal = rawequal

-- E[1]: the hub's epoch (written by the runtime when it moves).
-- E[2]: reasons for the Lua side to keep off the lane: a coroutine
--       running (a listener must not yield the sender's coroutine), or
--       fast sends nested at the limit (dispatch.rs MAX_DEPTH).
-- E[3]: how many fast sends are running, nested.
local E = { 0, 0, 0 }

local function block() E[2] = E[2] + 1 end
local function unblock(...)
  E[2] = E[2] - 1
  return ...
end

-- The baked send for one (function, key). `slow` is the hub's way (any
-- arguments); `fetch(obj)` asks the hub for the key's lane from that
-- source (a lane table, see dispatch.rs, or nil). A lane is kept while
-- the epoch stands and the source is the same value; a send it does not
-- fit (other argument kinds or count) goes the slow way.
local function make_send(slow, fetch, sourced)
  local epoch, src, lane = -1, nil, nil
  local function take(obj)
    lane = fetch(obj)
    if lane ~= nil and lane[5] ~= E[1] then lane = nil end
    epoch, src = E[1], obj
  end
  if sourced then
    return function(obj, ...)
      if E[2] ~= 0 then return slow(obj, ...) end
      if E[1] ~= epoch or not rawequal(obj, src) then take(obj) end
      if lane ~= nil and dispatch(lane, ...) then return end
      return slow(obj, ...)
    end
  end
  return function(...)
    if E[2] ~= 0 then return slow(...) end
    if E[1] ~= epoch then take(nil) end
    if lane ~= nil and dispatch(lane, ...) then return end
    return slow(...)
  end
end

return { E = E, block = block, unblock = unblock, make_send = make_send }
