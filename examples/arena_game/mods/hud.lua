-- The HUD: it did not spawn the player, so the game hands it over as a
-- stored world message (`Arena.Player`); a stored message reaches a
-- listener that comes later, so load order does not matter.
ListenWorldMessage(self:World(), "Arena.Player", nil, function(player)
  -- One call per changed row of the player's bag: a slot redraws only
  -- when it changes.
  ListenRowMessage(player, "Player.Bag", nil, GMP.AllRows, function(row, item)
    print(string.format("[hud] slot %d: %s x%d", row, item.name, item.count))
  end)
end)
