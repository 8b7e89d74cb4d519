-- The quest giver: on the first tick it starts a quest (the reward is a
-- plain table), and it hears when the quest is done.
ListenMessage("Quest.Done", nil, function(id)
  print("giver: quest " .. id .. " is done")
end)

ListenMessage("Game.Tick", nil, function(n, dt)
  if n == 1 then
    NotifyMessage("Quest.Start", "wolves", { gold = 50, item = "sword" })
  end
end)
