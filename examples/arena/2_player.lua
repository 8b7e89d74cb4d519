-- A player: listens to ticks, attacks through the rules, owns listeners.
local name, hp = "ann", 30

ListenObjectMessage(GMP.Spawn(), "Arena.Size", nil, function() end) -- another object
ListenWorldMessage(self:World(), "Arena.Bell", nil, function(text)
  print(name .. " hears the bell: " .. text)
end)

-- A listener owned by a table: it lives as long as `buff` does.
local buff = { bonus = 2 }
ListenMessage("Game.Tick", buff, function(n, dt)
  -- the closure captures its owner; that does not keep it alive
  buff.bonus = buff.bonus + 0 * dt
end)

local function attack(weapon)
  -- GMP.Request yields until the answer, so it runs in a coroutine.
  coroutine.wrap(function()
    local damage = GMP.Request(self, "Weapon.Damage", weapon)
    local result, hit = RunHook("Combat.Damage", { __struct = "Hit", amount = damage * 2 })
    hp = hp - hit.amount
    NotifyMessage("Player.Hurt", name, hp)
  end)()
end

ListenMessage("Game.Tick", nil, function(n, dt)
  if n == 1 then attack("sword") end
  if n == 2 then
    -- the reply-function form of a request
    SendObjectMessage(self, "Weapon.Damage", "stick", function(damage)
      print(name .. " would take " .. damage .. " from a stick")
    end)
  end
end)
