-- The inventory: `Inv.Items` is a collection (a stored array of `Item`
-- structs) kept on the world, so every script finds it. It is edited in
-- place with GMP.StoredArray, which publishes once when its `<close>` scope
-- ends and tells row listeners exactly which rows changed.
local world = self:World()

do
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  items:Add({ name = "sword", count = 1 })
end

local function find(items, name)
  for i = 1, items:Num() do
    if items:Get(i).name == name then return i end
  end
end

-- Anyone may add to the inventory (the shop does).
ListenMessage("Inv.Add", nil, function(name, count)
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  local i = find(items, name)
  if i then
    local row = items:GetMutable(i)
    row.count = row.count + count
  else
    items:Add({ name = name, count = count })
  end
end)

-- A request: "use one of these", answered true or false.
ListenMessage("Inv.Use", nil, function(name, rsp)
  local items <close> = GMP.StoredArray(world, "Inv.Items")
  local i = find(items, name)
  if not i then return rsp:Response(false) end
  local row = items:GetMutable(i)
  row.count = row.count - 1
  if row.count == 0 then items:RemoveAt(i) end
  rsp:Response(true)
end)
