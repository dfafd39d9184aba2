-- Argo CD health check of aidc.io/TrainingJob (aidc-operator), for Argo CD's Lua 5.1 VM.
-- Install: the key resource.customizations.health.aidc.io_TrainingJob of argocd-cm
-- (deploy/argocd/argocd-cm-patch.yaml, generated from this file; see docs/argocd.md).
--
--   Healthy      Ready=True and status.observedGeneration == metadata.generation
--                or the task finished (status.phase Succeeded), as Argo CD shows a Job
--   Degraded     Ready or Synced is False with a terminal reason (below)
--                or the task failed (status.phase Failed)
--   Progressing  anything else, including no status yet and a status older than
--                the spec
--   Suspended    the task was stopped (status.phase Stopped)

-- Conditions: Ready reflects the remote resource, Synced the last
-- reconcile. A reason that ends in one of these suffixes is terminal: the operator
-- will not succeed without a change of the spec or of the API-key Secret.
local TERMINAL_REASON_SUFFIXES = {
  "Failed", "Refused", "Forbidden", "Terminal", "InvalidSpec", "OutcomeUnknown",
}

local function isTerminal(reason)
  if type(reason) ~= "string" then
    return false
  end
  for _, suffix in ipairs(TERMINAL_REASON_SUFFIXES) do
    if #reason >= #suffix and string.sub(reason, -#suffix) == suffix then
      return true
    end
  end
  return false
end

local function describe(c)
  local text = c.type .. " is " .. tostring(c.status)
  if c.reason ~= nil and c.reason ~= "" then
    text = text .. " (" .. c.reason .. ")"
  end
  if c.message ~= nil and c.message ~= "" then
    text = text .. ": " .. c.message
  end
  return text
end

local hs = {}
local generation = obj.metadata and obj.metadata.generation
local status = obj.status
if status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to reconcile"
  return hs
end

-- A condition set for an older generation says nothing about the current spec.
local function current(c)
  local observed = c.observedGeneration
  if observed == nil then
    observed = status.observedGeneration
  end
  return observed == nil or generation == nil or observed >= generation
end

local ready, synced
if status.conditions ~= nil then
  for _, c in ipairs(status.conditions) do
    if c.type == "Ready" then
      ready = c
    elseif c.type == "Synced" then
      synced = c
    end
  end
end

for _, c in ipairs({ synced or false, ready or false }) do
  if c and c.status == "False" and isTerminal(c.reason) and current(c) then
    hs.status = "Degraded"
    hs.message = describe(c)
    return hs
  end
end

local upToDate = generation == nil or status.observedGeneration == generation

-- The task's phase, once the status is current: a finished task is Healthy and a
-- failed one Degraded whatever its conditions, as Argo CD shows a Job.
if upToDate then
  if status.phase == "Succeeded" then
    hs.status = "Healthy"
    hs.message = "The training task finished"
    return hs
  elseif status.phase == "Failed" then
    hs.status = "Degraded"
    hs.message = "The training task failed" .. (ready and ready.message and ready.message ~= "" and (": " .. ready.message) or "")
    return hs
  elseif status.phase == "Stopped" then
    hs.status = "Suspended"
    hs.message = "The training task was stopped"
    return hs
  end
end

if ready ~= nil and ready.status == "True" and upToDate then
  hs.status = "Healthy"
  hs.message = describe(ready)
  return hs
end

hs.status = "Progressing"
if not upToDate then
  hs.message = "Waiting for the operator to observe generation " .. tostring(generation)
elseif synced ~= nil and synced.status == "False" then
  hs.message = describe(synced)
elseif ready ~= nil then
  hs.message = describe(ready)
else
  hs.message = "Waiting for the operator to report Ready"
end
return hs
