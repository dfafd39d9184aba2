-- TrainingTemplate: no state of its own; Ready and Synced say all.
local function kindRule(status, ready)
  return nil
end
