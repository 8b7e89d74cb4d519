-- The north shard: greets the realm on the first tick and wakes the
-- dragon on the third. The dragon is stored: a shard that starts later
-- still hears of it.
local world = self:World()

ListenMessage("Chat.Say", nil, function(from, text)
  print(("[north] %s says: %s"):format(from, text))
end)

ListenWorldMessage(world, "World.Event", nil, function(text)
  print("[north] in the realm: " .. text)
end)

ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then
    NotifyMessage("Chat.Say", "north", "hello from the north")
  elseif n == 3 then
    StoreObjectMessage(world, "World.Event", "the dragon wakes")
  end
end)
