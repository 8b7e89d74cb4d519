-- quest: the wolves at the mill, started on the first tick and done on
-- the third.
ListenMessage("Game.Tick", nil, function(n)
  if n == 1 then
    NotifyMessage("Quest.Start", "wolves")
    NotifyMessage("Ui.Toast", "The miller needs help with the wolves.")
  elseif n == 3 then
    NotifyMessage("Quest.Done", "wolves", 50)
  end
end)
