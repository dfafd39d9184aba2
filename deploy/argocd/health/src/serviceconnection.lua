-- ServiceConnection: no rule of its own; Ready and the reason table decide.
local function kindRule(status, ready)
  return nil
end
