-- UI widgets: each follows one slot of the inventory and redraws only when
-- that row changes (a slot is a position, not an item). WithRemoval asks to
-- hear the row go away too: it then arrives as ~slot with a default item.
local format = require("lib.format")

local function widget(slot)
  ListenRowMessage(self:World(), "Inv.Items", nil, GMP.WithRemoval(slot), function(row, item)
    if row < 0 then
      print(format.slot(~row, nil))
    else
      print(format.slot(row, item))
    end
  end)
end

widget(1)
widget(2)
