-- The arena's rules: a stored message, a hook and a request responder.
local format = require("lib.format")

-- Stored: scripts loaded later still hear the arena's size when they listen.
StoreObjectMessage(self, "Arena.Size", 20, 12)

-- A hook: every hit passes through here and may be changed or cancelled.
ListenHook("Combat.Damage", nil, function(hit, ctx)
  if hit.amount > 10 then
    hit.amount = 10            -- cap big hits
    ctx:Handled()
  end
end, { priority = 10 })

-- A request: anyone may ask the rules how much a weapon deals.
ListenMessage("Weapon.Damage", nil, function(weapon, rsp)
  rsp:Response(weapon == "sword" and 7 or 3)
end)

-- The rules announce each hurt player (partial match hears Player.*).
ListenMessage("Player", nil, function(name, hp)
  print(format.hp(name, hp))
end, { match = "partial" })

-- Once, stored on the world: the first world listener of the opening bell
-- gets it, nobody after. (Replays respect scope: a world listener is replayed
-- what was stored on its world.)
OnceObjectMessage(self:World(), "Arena.Bell", "fight!")
print("rules ready")
