-- NasVolume: a failed storage (status.phase Failed) is Degraded.
local function kindRule(status, ready)
  if status.phase == "Failed" then
    return "Degraded", "The storage failed" .. readyDetail(ready)
  end
  return nil
end
