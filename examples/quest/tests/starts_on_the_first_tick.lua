-- The giver starts the wolves quest on the first tick, and only then.
test("the first tick starts the wolves quest", function()
  tick(1)
  local starts = sent("Quest.Start")
  expect_eq(#starts, 1)
  expect_eq(starts[1][1], "wolves")
  expect_eq(starts[1][2], { gold = 50, item = "sword" })
end)

test("later ticks start no other quest", function()
  tick(3)
  expect_eq(#sent("Quest.Start"), 1)
end)

test("nothing starts before the first tick", function()
  expect_eq(#sent("Quest.Start"), 0)
end)
