-- The shop answers requests: `Shop.Buy(item, gold)` replies `ok, price`
-- through the responder it is handed after the message's parameters.
local prices = { potion = 4 }

ListenMessage("Shop.Buy", nil, function(item, gold, rsp)
  local price = prices[item]
  if price == nil or gold < price then
    return rsp:Response(false, 0)
  end
  NotifyMessage("Inv.Add", item, 1)
  rsp:Response(true, price)
end)
