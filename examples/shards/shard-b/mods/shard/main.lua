-- The south shard: greets the realm on the first tick, and answers the
-- dragon's waking (a send made while a peer's message is delivered
-- crosses too).
local world = self:World()

ListenMessage("Chat.Say", nil, function(from, text)
  print(("[south] %s says: %s"):format(from, text))
end)

ListenWorldMessage(world, "World.Event", nil, function(text)
  print("[south] in the realm: " .. text)
  NotifyMessage("Chat.Say", "south", "we saw it too: " .. text)
end)

ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then
    NotifyMessage("Chat.Say", "south", "hello from the south")
  end
end)
