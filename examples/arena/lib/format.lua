-- A module of the mod folder: `require("lib.format")` from any script.
local M = {}

function M.hp(name, hp)
  return string.format("%s has %d hp", name, hp)
end

return M
