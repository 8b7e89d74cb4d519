-- A module of the mod folder: `require("lib.format")` from any script.
local M = {}

-- What a UI widget draws for one inventory slot.
function M.slot(slot, item)
  if item == nil then
    return string.format("[ui] slot %d: (empty)", slot)
  end
  return string.format("[ui] slot %d: %s x%d", slot, item.name, item.count)
end

return M
