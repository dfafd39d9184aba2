-- Argo CD health check of @GROUP@/@KIND@ (aidc-operator), for Argo CD's Lua 5.1 VM.
-- Install: the key resource.customizations.health.@GROUP@_@KIND@ of argocd-cm
-- (deploy/argocd/argocd-cm-patch.yaml; see docs/argocd.md).
--
--   Healthy      Ready=True and status.observedGeneration == metadata.generation
--   Degraded     Ready or Synced is not True with a terminal reason (below)
--   Progressing  anything else, including no status yet, a status older than
--                the spec, and an object being deleted
--   Suspended    Synced is False with a resting reason (the object is paused), or
--                Ready is False with one (below): nothing is wrong and nothing is
--                under way (a task or an instance stopped)
-- and, once status.observedGeneration == metadata.generation, the kind's own states
-- that kindRule (below) reads, which go before the Healthy of Ready=True.

-- Conditions: Ready reflects the remote resource, Synced the last
-- reconcile. The Terminal reasons of @KIND@ (REASONS of src/crds, the one table of
-- reasons): the operator will not succeed without a person.
local TERMINAL_REASONS = {
@TERMINAL_REASONS@
}

local function isTerminal(reason)
  return type(reason) == "string" and TERMINAL_REASONS[reason] == true
end

-- The Resting reasons of @KIND@: not ready, but nothing is wrong or under way.
local RESTING_REASONS = {
@RESTING_REASONS@
}

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

-- ": " and the message of the Ready condition, or "" when it has none: what a
-- kind's Degraded state adds to its own message.
local function readyDetail(ready)
  return (ready and ready.message and ready.message ~= "" and (": " .. ready.message) or "")
end

-- The kind's own states (the `health` of its CrdDefinition in src/crds): the values
-- of status.@STATE_FIELD@ that decide by themselves, as { health, message }.
local KIND_STATES = {
@KIND_STATES@
}

-- kindRule(status, ready) returns a health status and a message, or nil when the
-- kind's own state decides nothing. A Degraded state adds the Ready message.
local function kindRule(status, ready)
  local value = status["@STATE_FIELD@"]
  local state = type(value) == "string" and KIND_STATES[value] or nil
  if state == nil then
    return nil
  end
  if state[1] == "Degraded" then
    return state[1], state[2] .. readyDetail(ready)
  end
  return state[1], state[2]
end

local hs = {}
local generation = obj.metadata and obj.metadata.generation
local status = obj.status
-- Being deleted: what Argo CD itself says of any object with a deletionTimestamp.
if obj.metadata ~= nil and obj.metadata.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  hs.message = "Pending deletion"
  return hs
end
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
  if c and c.status ~= "True" and isTerminal(c.reason) and current(c) then
    hs.status = "Degraded"
    hs.message = describe(c)
    return hs
  end
end

-- Paused by the user (a resting reason on Synced: ReconcilePaused): Suspended, as Argo
-- CD shows a suspended CronJob or a paused Rollout.
if synced ~= nil and synced.status == "False" and type(synced.reason) == "string"
    and RESTING_REASONS[synced.reason] == true and current(synced) then
  hs.status = "Suspended"
  hs.message = describe(synced)
  return hs
end

local upToDate = generation == nil or status.observedGeneration == generation

-- The kind's own state, once the status is current.
if upToDate then
  local health, message = kindRule(status, ready)
  if health ~= nil then
    hs.status = health
    hs.message = message
    return hs
  end
end

if ready ~= nil and ready.status == "False" and type(ready.reason) == "string"
    and RESTING_REASONS[ready.reason] == true and current(ready) then
  hs.status = "Suspended"
  hs.message = describe(ready)
  return hs
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
