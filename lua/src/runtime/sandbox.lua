-- Gantry's sandbox, run once per Lua state with the full standard library.
-- Returns the functions the runtime uses to build each script's environment.
-- `memory_limit` is the state's memory limit in bytes, or nil; `max_chunk`,
-- the most bytes a script may have (what `load` compiles in one C call);
-- `plain_error`, an error object as a script should see it (see below).
local lane_block, lane_unblock, memory_limit, max_chunk, plain_error = ...
local G = _G
local pairs, ipairs, type, error, select, tostring = pairs, ipairs, type, error, select, tostring
local rawget, real_setmetatable = rawget, setmetatable
local tointeger, string_format = math.tointeger, string.format
local real_load, real_create, real_resume = load, coroutine.create, coroutine.resume
local real_pcall, real_xpcall = pcall, xpcall
local real_yield, real_yieldable, real_collect = coroutine.yield, coroutine.isyieldable, collectgarbage
local os_clock, os_time, os_date = os.clock, os.time, os.date

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- `string.rep` turns a small input into a string of any size in one
-- allocation, which Lua refuses at the memory limit with a memory error that
-- names no line. Checked here first, the error names the caller's line.
-- An empty string repeated is empty at once: Lua's loop would still turn
-- `n` times, one uninterruptible C call of up to 2^63 turns.
-- (The library functions whose C loops a script could make run long are
-- already bounded ones here: see bounded/mod.rs.)
local real_rep = string.rep
local function checked_rep(s, n, sep)
  local count = nil
  if type(n) == "number" or type(n) == "string" then count = tointeger(n) end
  if s == "" and (sep == nil or sep == "") and count ~= nil then return "" end
  if memory_limit ~= nil and (type(s) == "string" or type(s) == "number") then
    local lsep = 0
    if type(sep) == "string" or type(sep) == "number" then lsep = #tostring(sep) end
    if count ~= nil and count > 0 then
      -- In floats: no overflow (real_rep refuses what does not fit).
      local size = (#tostring(s) + lsep) * (count + 0.0) - lsep
      local room = memory_limit - real_collect("count") * 1024
      if size > room then
        real_collect("collect")
        room = memory_limit - real_collect("count") * 1024
      end
      if size > room then
        error(string_format(
          "memory limit of %d bytes exceeded: string.rep would make a string of %.0f bytes",
          memory_limit, size), 2)
      end
    end
  end
  return real_rep(s, n, sep)
end

-- What scripts see as `string`: no `dump` (no binary chunks), the checked
-- `rep`. Each script gets its own copy of it.
local string_lib = copy(string)
string_lib.dump = nil
string_lib.rep = checked_rep

-- The string metatable is shared by every script: its `__index` is what
-- `("").dump` or `s:rep(n)` reach, so it is the sandbox's string table, not
-- the real one; then it is hidden.
local string_mt = getmetatable("")
string_mt.__index = string_lib
string_mt.__metatable = false

-- `setmetatable` without finalizers. Lua runs a `__gc` metamethod with the
-- debug hooks off, so the instruction budget cannot stop it, and at the
-- latest when the state closes, after the watchdog is gone: a runaway
-- finalizer would hang the host. Lua marks an object for finalization only
-- when `setmetatable` gives it a metatable that has `__gc` at that moment;
-- a `__gc` added to the metatable afterwards is ignored for that object
-- (Lua 5.4 manual, 2.5.3), so refusing it here is enough. (A metatable that
-- later gets `__gc` and is then given to another object is refused here.)
-- The userdata the runtime hands out (objects, worlds, responders, hook
-- contexts, writers) have protected metatables (`getmetatable` gives
-- false), so a script cannot change their finalizers; their `__gc` and
-- `__close` are the runtime's Rust code. A script's own `__close` runs
-- within the call that closes it, under its budget.
local function safe_setmetatable(t, mt)
  if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
    error("setmetatable: a __gc finalizer is not allowed in a script (finalizers run outside the instruction budget)", 2)
  end
  return real_setmetatable(t, mt)
end

local base = {
  "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
  "rawlen", "rawset", "select", "setmetatable", "getmetatable", "tonumber",
  "tostring", "type", "xpcall", "_VERSION",
}
local libs = { "table", "math", "utf8" }
local gc_options = { collect = true, count = true, step = true, isrunning = true }

local function wrap_result(ok, ...)
  if ok then return ... end
  error((...), 0)
end

-- What a script catches of an error: an API function's refusal is raised
-- from Rust as an error object (a userdata whose text carries a stack
-- traceback of the runtime's frames, and that `err:find` cannot search);
-- a script sees its message as a string, as it sees a Lua library
-- function's. Any other error object is left as it is.
local function settled(ok, ...)
  if ok then return ok, ... end
  return ok, plain_error((...))
end

local function safe_pcall(f, ...)
  return settled(real_pcall(f, ...))
end

local function safe_xpcall(f, msgh, ...)
  if type(msgh) ~= "function" then return real_xpcall(f, msgh, ...) end
  return real_xpcall(f, function(e) return msgh(plain_error(e)) end, ...)
end

local function make_env(api, gmp, print, require, hook_thread)
  local env = {}
  for _, name in ipairs(base) do env[name] = G[name] end
  for _, name in ipairs(libs) do env[name] = copy(G[name]) end
  env.string = copy(string_lib)
  env.setmetatable = safe_setmetatable
  env.pcall = safe_pcall
  env.xpcall = safe_xpcall
  env.os = { clock = os_clock, time = os_time, date = os_date }
  local co = copy(coroutine)
  -- Coroutines carry the instruction budget's hook from their start.
  co.create = function(f)
    local thread = real_create(f)
    hook_thread(thread)
    return thread
  end
  -- The fast lane stays off while a coroutine runs (see fast.rs).
  co.resume = function(thread, ...)
    lane_block()
    return settled(lane_unblock(real_resume(thread, ...)))
  end
  local real_close = co.close
  co.close = function(thread)
    return settled(real_close(thread))
  end
  co.wrap = function(f)
    local thread = co.create(f)
    return function(...)
      lane_block()
      return wrap_result(lane_unblock(real_resume(thread, ...)))
    end
  end
  env.coroutine = co
  env.load = function(chunk, name, mode, chunk_env)
    if mode ~= nil and mode ~= "t" then
      error("load: only text chunks are allowed (mode \"t\")", 2)
    end
    if chunk_env == nil then chunk_env = env end
    -- Compiling is one C call, as long as the text: bounded as a script
    -- file is. (A reader function's pieces are read by Lua code, which
    -- the budget stops.)
    if type(chunk) == "string" and #chunk > max_chunk then
      return nil, string_format(
        "load: a chunk of %d bytes is larger than a script may be (%d bytes)", #chunk, max_chunk)
    end
    return real_load(chunk, name, "t", chunk_env)
  end
  env.collectgarbage = function(option, ...)
    option = option or "collect"
    if not gc_options[option] then
      error("collectgarbage(\"" .. tostring(option) .. "\") is not allowed", 2)
    end
    return real_collect(option, ...)
  end
  env.print = print
  env.require = require
  for name, f in pairs(api) do env[name] = f end
  env.GMP = gmp
  env._G = env
  return env
end

local function finish_request(done, ...)
  if done then return ... end
  return real_yield()
end

-- GMP.Request: yields until the reply unless it was answered during the send.
local function wrap_request(send)
  return function(...)
    if not real_yieldable() then
      error("GMP.Request must run in a coroutine (wrap the caller in coroutine.wrap)", 2)
    end
    return finish_request(send(...))
  end
end

return { make_env = make_env, wrap_request = wrap_request }
