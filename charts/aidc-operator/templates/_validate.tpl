{{/*
Fails the render on combinations the schema cannot express.
*/}}
{{- define "aidc-operator.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled=true: only one operator may reconcile at a time" }}
{{- end }}
{{- include "aidc-operator.validateDerived" . }}
{{- /* Values that take effect only beside another: set alone, they would do nothing. */}}
{{- $empty := list "" "\"\"" }}
{{- range list
  (list "objectStorage.webIdentity.stsEndpoint" "objectStorage.webIdentity.roleArn" "it is the STS of the operator's own role; a ServiceConnection's role names its STS in its spec.objectStorage.webIdentity.stsEndpoint")
  (list "objectStorage.credentialsSecret.sessionTokenKey" "objectStorage.credentialsSecret.name" "it is a key of that Secret") }}
{{- if and (not (has (include "aidc-operator.valueAt" (list $.Values (index . 0))) $empty)) (has (include "aidc-operator.valueAt" (list $.Values (index . 1))) $empty) }}
{{- fail (printf "%s needs %s: %s" (index . 0) (index . 1) (index . 2)) }}
{{- end }}
{{- end }}
{{- $stopMs := int (dig "shutdownTimeoutMs" 0 (.Values.config | default dict)) }}
{{- if gt $stopMs (mul (int .Values.terminationGracePeriodSeconds) 1000) }}
{{- fail (printf "config.shutdownTimeoutMs %d is longer than terminationGracePeriodSeconds (%d s): the pod would be killed before it stopped; set terminationGracePeriodSeconds alone, the chart sets shutdownTimeoutMs from it" $stopMs (int .Values.terminationGracePeriodSeconds)) }}
{{- end }}
{{- $fullname := include "aidc-operator.fullname" . }}
{{- $longest := printf "%s%s" $fullname (include "aidc-operator.longestLabelSuffix" .) }}
{{- if gt (len $longest) 63 }}
{{- fail (printf "the object name prefix %q (%d characters, from the release name or fullnameOverride) is too long: the Service %s would have %d characters and Kubernetes allows 63; use a prefix of at most %d characters (fullnameOverride)" $fullname (len $fullname) $longest (len $longest) (sub 63 (sub (len $longest) (len $fullname)))) }}
{{- end }}
{{- $limit := dig "limits" "memory" "" (.Values.resources | default dict) }}
{{- if and .Values.heapLimitMiB $limit }}
{{- $limitMiB := include "aidc-operator.memoryMiB" $limit | int }}
{{- if ge (int .Values.heapLimitMiB) $limitMiB }}
{{- fail (printf "heapLimitMiB %d must be below resources.limits.memory (%v, %d MiB): Node needs memory beyond its heap, and the container would be OOM-killed before it collects garbage; use about three quarters of the limit (%d)" (int .Values.heapLimitMiB) $limit $limitMiB (div (mul $limitMiB 3) 4)) }}
{{- end }}
{{- end }}
{{- if and .Values.podDisruptionBudget.enabled (gt (int .Values.replicas) 1) }}
{{- $min := .Values.podDisruptionBudget.minAvailable }}
{{- $blocks := false }}
{{- if kindIs "string" $min }}
{{- $blocks = ge (trimSuffix "%" $min | int) 100 }}
{{- else }}
{{- $blocks = ge (int $min) (int .Values.replicas) }}
{{- end }}
{{- if $blocks }}
{{- fail (printf "podDisruptionBudget.minAvailable %v must be below replicas (%d): with every operator pod required, no node running one could ever be drained" $min (int .Values.replicas)) }}
{{- end }}
{{- end }}
{{- include "aidc-operator.validatePodLists" (include "aidc-operator.deployment" (dict "root" . "shard" "") | fromYaml) }}
{{- include "aidc-operator.validateUrls" (include "aidc-operator.config" . | fromYaml) }}
{{- end }}

{{/*
A plain http URL of the rendered config (the service's, the object storage's) needs its
allowInsecureHttp, as the operator checks at start (src/config/service-schema.ts,
object-storage-schema.ts): refused here, not by a pod that stops.
*/}}
{{- define "aidc-operator.validateUrls" -}}
{{- range list (list "service" "baseUrl" "service.baseUrl") (list "objectStorage" "endpoint" "objectStorage.endpoint") }}
{{- $section := get $ (index . 0) | default dict }}
{{- $url := toString (get $section (index . 1)) }}
{{- if and (hasPrefix "http://" $url) (not (get $section "allowInsecureHttp")) }}
{{- fail (printf "%s %s is plain http, which would send the credentials unencrypted: use an https:// URL, or set %s.allowInsecureHttp=true (a local emulator or playground only)" (index . 2) $url (index . 0)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Each entry of the operator pod's keyed lists is there once: env by name, volumes by
name, volume mounts by mountPath. extraEnv, extraVolumes and extraVolumeMounts may not
repeat what the chart sets: a container sees only the last of two variables of one
name, and Helm 4's server-side apply refuses the Deployment ("duplicate entries for
key"); the API server refuses two volumes or mounts. Called with the rendered Deployment.
*/}}
{{- define "aidc-operator.validatePodLists" -}}
{{- $pod := .spec.template.spec }}
{{- $container := index $pod.containers 0 }}
{{- $refused := "the API server refuses the Deployment" }}
{{- $lists := list (list "extraEnv" "name" $container.env "the container sees only the last, and Helm 4's server-side apply refuses the Deployment") (list "extraVolumes" "name" $pod.volumes $refused) (list "extraVolumeMounts" "mountPath" $container.volumeMounts $refused) }}
{{- range $lists }}
{{- $value := index . 0 }}
{{- $field := index . 1 }}
{{- $why := index . 3 }}
{{- $seen := dict }}
{{- range index . 2 }}
{{- $key := toString (get . $field) }}
{{- if hasKey $seen $key }}
{{- $hint := "" }}
{{- if eq $key "NODE_OPTIONS" }}
{{- $hint = "; for other Node options, set heapLimitMiB=0 and give --max-old-space-size in your NODE_OPTIONS" }}
{{- end }}
{{- fail (printf "%s: the %s %s is in the operator pod twice (the chart sets it, or %s repeats it): %s%s" $value $field $key $value $why $hint) }}
{{- end }}
{{- $_ := set $seen $key true }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Operator settings the chart writes from a value of its own, which also grants or wires
what the setting needs: a `config` override that differs, or its variable in
`extraEnv`, would leave that behind (a probe on the wrong port, a missing rule, two
leaders). Each row: the setting, the chart value it comes from, what else that value
sets, its environment variable (src/config/settings.ts).
*/}}
{{- define "aidc-operator.validateDerived" -}}
{{- $own := include "aidc-operator.chartConfig" . | fromYaml }}
{{- $overrides := .Values.config | default dict }}
{{- $envNames := list }}
{{- range .Values.extraEnv }}{{ $envNames = append $envNames (toString .name) }}{{ end }}
{{- range list
  (list "server.port" "metricsPort" "the container port, its probes and the metrics Service" "AIDC_METRICS_PORT")
  (list "leaderElection.enabled" "leaderElection.enabled" "the Role on Leases, and refuses several replicas without it" "AIDC_LEADER_ELECTION")
  (list "leaderElection.leaseNamespace" "the release namespace (--namespace)" "the Role on Leases there" "AIDC_LEASE_NAMESPACE")
  (list "watchNamespaces" "watchNamespaces" "the RoleBindings in those namespaces, or the ClusterRoleBinding" "AIDC_WATCH_NAMESPACES")
  (list "shardKey" "shards" "a Deployment and a PodDisruptionBudget per shard" "AIDC_SHARD_KEY")
  (list "connections.secretNamespace" "connections.secretNamespace" "the Role on Secrets there" "")
  (list "trainingJob.exposure.enabled" "exposure.enabled" "the rules on Services and EndpointSlices" "AIDC_EXPOSURE")
  (list "objectStorage.exportCredentials" "objectStorage.exportCredentials" "the rules on Secrets in the watched namespaces" "") }}
{{- $set := include "aidc-operator.valueAt" (list $overrides (index . 0)) }}
{{- if and $set (ne $set (include "aidc-operator.valueAt" (list $own (index . 0)))) }}
{{- fail (printf "config.%s: %s differs from what the chart writes from %s, which also sets %s: set %s instead of the override" (index . 0) $set (index . 1) (index . 2) (index . 1)) }}
{{- end }}
{{- /* The environment wins over the config file (src/config/load.ts). */}}
{{- if and (index . 3) (has (index . 3) $envNames) }}
{{- fail (printf "extraEnv: %s sets %s, which the chart writes from %s, which also sets %s: set %s instead" (index . 3) (index . 0) (index . 1) (index . 2) (index . 1)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The JSON of the value at a dotted path of a tree, "" where there is none. Called with
(list tree path).
*/}}
{{- define "aidc-operator.valueAt" -}}
{{- $node := index . 0 }}
{{- $found := true }}
{{- range splitList "." (index . 1) }}
{{- if and $found (kindIs "map" $node) (hasKey $node .) }}
{{- $node = get $node . }}
{{- else }}
{{- $found = false }}
{{- end }}
{{- end }}
{{- if $found }}{{ toJson $node }}{{ end }}
{{- end }}
