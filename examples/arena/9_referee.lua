-- The referee announces each tick first: `order = -100` runs it before
-- every other Game.Tick listener, whatever file they are in. As the last
-- script loaded it says booting is done: `Boot.Done` is a once message,
-- kept until its first listener hears it (live or late), then gone.
ListenMessage("Game.Tick", nil, function(n)
  print(string.format("-- tick %d --", n))
end, { order = -100 })

OnceObjectMessage(self:World(), "Boot.Done", "the arena")
