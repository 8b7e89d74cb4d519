-- Gantry's sandbox, run once per Lua state with the full standard library.
-- Returns the functions the runtime uses to build each script's environment.
local lane_block, lane_unblock = ...
local G = _G
local pairs, ipairs, type, error, select, tostring = pairs, ipairs, type, error, select, tostring
local real_load, real_create, real_resume = load, coroutine.create, coroutine.resume
local real_yield, real_yieldable, real_collect = coroutine.yield, coroutine.isyieldable, collectgarbage
local os_clock, os_time, os_date = os.clock, os.time, os.date

-- The string metatable is shared by every script: hide it.
getmetatable("").__metatable = false

local base = {
  "assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget",
  "rawlen", "rawset", "select", "setmetatable", "getmetatable", "tonumber",
  "tostring", "type", "xpcall", "_VERSION",
}
local libs = { "string", "table", "math", "utf8" }
local gc_options = { collect = true, count = true, step = true, isrunning = true }

local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

local function wrap_result(ok, ...)
  if ok then return ... end
  error((...), 0)
end

local function make_env(api, gmp, print, require, hook_thread)
  local env = {}
  for _, name in ipairs(base) do env[name] = G[name] end
  for _, name in ipairs(libs) do env[name] = copy(G[name]) end
  env.string.dump = nil
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
    return lane_unblock(real_resume(thread, ...))
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
