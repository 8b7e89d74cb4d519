-- Another mod: on tick 4 the shrine shines and cancels every blow. Its hook
-- has a higher priority than the armour's, so it runs first, and a
-- cancelled hit stops there (the armour never sees it).
local shining = false

ListenMessage("Game.Tick", nil, function(n)
  shining = (n == 4)
end, { order = -50 })

ListenHook("Combat.Damage", nil, function(hit, ctx)
  if shining then
    print("[shrine] the shrine's light turns the blow aside")
    ctx:Cancel()
  end
end, { priority = 20 })
