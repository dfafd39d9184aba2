-- CciInstance: the observed instance's own state (status.remoteStatus; the operator
-- cannot create or repair it). ERROR or FAILED is Degraded, STOPPED is Suspended.
local function kindRule(status, ready)
  local remote = status.remoteStatus
  if remote == "ERROR" or remote == "FAILED" then
    return "Degraded", "The instance is " .. remote .. readyDetail(ready)
  elseif remote == "STOPPED" then
    return "Suspended", "The instance is STOPPED"
  end
  return nil
end
