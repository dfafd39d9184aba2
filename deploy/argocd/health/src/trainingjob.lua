-- TrainingJob: the task's phase. A finished task is Healthy and a failed one
-- Degraded whatever its conditions, as Argo CD shows a Job; a stopped task is
-- Suspended.
local function kindRule(status, ready)
  if status.phase == "Succeeded" then
    return "Healthy", "The training task finished"
  elseif status.phase == "Failed" then
    return "Degraded", "The training task failed" .. readyDetail(ready)
  elseif status.phase == "Stopped" then
    return "Suspended", "The training task was stopped"
  end
  return nil
end
