-- An armour mod: every blow passes through the `Combat.Damage` hook, and
-- the armour takes 2 off it, whoever strikes and in whatever language.
ListenHook("Combat.Damage", nil, function(hit, ctx)
  local blocked = math.min(2, hit.amount)
  hit.amount = hit.amount - blocked
  print(string.format("[armour] blocks %d of %d", blocked, hit.amount + blocked))
end, { priority = 10 })
