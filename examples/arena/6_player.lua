-- Ann, the player: buys a potion on tick 1, takes the goblin's hits, and
-- drinks when low. GMP.Request waits for the answer, so it runs in a
-- coroutine.
local hp, gold = 20, 10

ListenWorldMessage(self:World(), "Boot.Done", nil, function(place)
  print("ann steps into " .. place)
end)

ListenMessage("Game.Tick", nil, function(n)
  if n ~= 1 then return end
  coroutine.wrap(function()
    local ok, price = GMP.Request(self, "Shop.Buy", "potion", gold)
    if ok then
      gold = gold - price
      print(string.format("ann buys a potion for %d gold (%d left)", price, gold))
    end
  end)()
end)

ListenMessage("Player.Hurt", nil, function(name, amount)
  if name ~= "ann" then return end
  hp = hp - amount
  print(string.format("ann takes %d (%d hp)", amount, hp))
  if hp < 10 then
    coroutine.wrap(function()
      if GMP.Request(self, "Inv.Use", "potion") then
        hp = hp + 8
        print(string.format("ann drinks a potion (%d hp)", hp))
      end
    end)()
  end
end)

-- `times = 1`: heard once, then the listener is gone. `order = 10` runs it
-- after the default-order listener above.
ListenMessage("Player.Hurt", nil, function(name)
  print("first blood!")
end, { times = 1, order = 10 })
