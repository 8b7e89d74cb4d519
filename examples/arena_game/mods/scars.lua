-- Loaded on the player: counts the blows the player took. The count is
-- stored on the player, not kept in a local only, so that when the game
-- unloads or reloads this script the new version hears it replayed.
local scars = 0
ListenObjectMessage(self, "Player.Scars", nil, function(n)
  scars = n
end)
ListenObjectMessage(self, "Player.Hurt", nil, function(dmg, hp)
  scars = scars + 1
  StoreObjectMessage(self, "Player.Scars", scars)
  print(string.format("[scars v1] %d, %d hp left", scars, hp))
end)
