-- core: keeps the player's gold. What is saved from the last session
-- arrives on Player.Gold before the first tick.
local world = self:World()
local gold = 0

ListenWorldMessage(world, "Player.Gold", nil, function(saved)
  gold = saved
end)

ListenMessage("Quest.Done", nil, function(id, reward)
  gold = gold + reward
  StoreObjectMessage(world, "Player.Gold", gold)
end)
