{{/*
Chart name, truncated to the 63 characters of a label value.
*/}}
{{- define "aidc-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Prefix of every object name: the release name, plus the chart name when the release
name does not already contain it. Never truncated: "aidc-operator.validate" refuses a
prefix that would make an object name longer than Kubernetes allows.
*/}}
{{- define "aidc-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The longest name suffix of an object whose name must be a DNS label (63 characters):
the metrics Service, `<fullname>-metrics`.
*/}}
{{- define "aidc-operator.longestLabelSuffix" -}}
-metrics
{{- end }}

{{/*
MiB (rounded down) of a Kubernetes memory quantity: 512Mi, 1Gi, 1G, 536870912.
*/}}
{{- define "aidc-operator.memoryMiB" -}}
{{- $q := toString . }}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 }}
{{- $bytes := 0.0 }}
{{- $matched := false }}
{{- range $suffix, $factor := $units }}
{{- if and (not $matched) (hasSuffix $suffix $q) }}
{{- $bytes = mulf (float64 (trimSuffix $suffix $q)) $factor }}
{{- $matched = true }}
{{- end }}
{{- end }}
{{- if not $matched }}
{{- $bytes = float64 $q }}
{{- end }}
{{- div (int64 $bytes) 1048576 }}
{{- end }}

{{/*
Chart label value: name-version.
*/}}
{{- define "aidc-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels that select the operator pods. Never change them: a Deployment's selector is
immutable.
*/}}
{{- define "aidc-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aidc-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "aidc-operator.labels" -}}
helm.sh/chart: {{ include "aidc-operator.chart" . }}
{{ include "aidc-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: aidc-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Name of the ServiceAccount.
*/}}
{{- define "aidc-operator.serviceAccountName" -}}
{{- default (include "aidc-operator.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/*
The image reference: repository@digest when a digest is set, else repository:tag
(tag defaults to the appVersion).
*/}}
{{- define "aidc-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/*
Name of the API-key Secret: `apiKeySecret` is a Secret name or an object {name, key}.
*/}}
{{- define "aidc-operator.apiKeySecretName" -}}
{{- if kindIs "string" .Values.apiKeySecret }}
{{- .Values.apiKeySecret }}
{{- else }}
{{- required "apiKeySecret.name is required: the Secret holding the service API key" .Values.apiKeySecret.name }}
{{- end }}
{{- end }}

{{/*
Key of the API key in that Secret (`apiKey` unless the object form names another).
*/}}
{{- define "aidc-operator.apiKeySecretKey" -}}
{{- if kindIs "string" .Values.apiKeySecret }}
{{- "apiKey" }}
{{- else }}
{{- default "apiKey" .Values.apiKeySecret.key }}
{{- end }}
{{- end }}

{{/*
Where the API key file is mounted in the operator container.
*/}}
{{- define "aidc-operator.apiKeyDir" -}}
/var/run/secrets/aidc
{{- end }}

{{/*
Name of the leader-election Lease.
*/}}
{{- define "aidc-operator.leaseName" -}}
{{- default (printf "%s-leader" (include "aidc-operator.fullname" .)) .Values.leaderElection.leaseName }}
{{- end }}

{{/*
The service's base URL: `service.baseUrl`, or `config.service.baseUrl`. Required: the
operator has no default (a default would point a cluster's operator at nothing).
*/}}
{{- define "aidc-operator.baseUrl" -}}
{{- $fromConfig := dig "service" "baseUrl" "" (.Values.config | default dict) }}
{{- required "service.baseUrl is required: the base URL of the Compute and Storage Service API, e.g. --set service.baseUrl=https://<the service's host>/ (the operator has no default)" (.Values.service.baseUrl | default $fromConfig) }}
{{- end }}

{{/*
The operator's config file (config.yaml in the ConfigMap): what the chart knows,
then `.Values.config` merged over it. The Lease's namespace is not written: the
operator uses its own (POD_NAMESPACE), so a kustomize namespace overlay stays right.
*/}}
{{/*
The one namespace whose Secrets the operator reads (connections' API keys).
*/}}
{{- define "aidc-operator.secretNamespace" -}}
{{- .Values.connections.secretNamespace | default .Release.Namespace }}
{{- end }}

{{/*
Where the default connection's S3 credentials Secret is mounted (files accessKeyId and
secretAccessKey, as objectStorage.credentialsDir reads them).
*/}}
{{- define "aidc-operator.s3CredentialsDir" -}}
/var/run/secrets/aidc-s3
{{- end }}

{{/*
Where the projected ServiceAccount token of web identity is mounted (file `token`).
*/}}
{{- define "aidc-operator.webIdentityTokenDir" -}}
/var/run/secrets/aidc-web-identity
{{- end }}

{{- define "aidc-operator.config" -}}
{{- /* The operator's whole stop fits in the pod's grace period, 5 s to spare (less for a short one). */}}
{{- $grace := int .Values.terminationGracePeriodSeconds }}
{{- $config := dict
  "shutdownTimeoutMs" (mul (sub $grace (min 5 (div $grace 2))) 1000)
  "service" (dict
    "apiKeyFile" (printf "%s/api-key" (include "aidc-operator.apiKeyDir" .))
    "allowInsecureHttp" .Values.service.allowInsecureHttp)
  "server" (dict "port" (int .Values.metricsPort))
  "leaderElection" (dict
    "enabled" .Values.leaderElection.enabled
    "leaseName" (include "aidc-operator.leaseName" .))
  "watchNamespaces" .Values.watchNamespaces
  "trainingJob" (dict "exposure" (dict
    "enabled" .Values.exposure.enabled
    "allowedCidrs" .Values.exposure.allowedCidrs))
  "adoption" (dict "namespaces" .Values.adoption.namespaces)
}}
{{- /* Unset, the operator reads Secrets in its own namespace (POD_NAMESPACE): a
kustomize `namespace:` overlay moves it with the pod. */}}
{{- with .Values.connections.secretNamespace }}
{{- $_ := set $config "connections" (dict "secretNamespace" .) }}
{{- end }}
{{- with .Values.objectStorage }}
{{- $os := dict }}
{{- if .endpoint }}
{{- $os = dict "endpoint" .endpoint "region" .region "allowInsecureHttp" .allowInsecureHttp }}
{{- if .credentialsSecret.name }}
{{- $_ := set $os "credentialsDir" (include "aidc-operator.s3CredentialsDir" $) }}
{{- end }}
{{- end }}
{{- /* The Secret rules of the credentials export are granted with this value (_rbac-rules.tpl). */}}
{{- if .exportCredentials }}
{{- $_ := set $os "exportCredentials" true }}
{{- end }}
{{- if $os }}
{{- $_ := set $config "objectStorage" $os }}
{{- end }}
{{- end }}
{{- $_ := set $config.service "baseUrl" (include "aidc-operator.baseUrl" .) }}
{{- mustMergeOverwrite $config (deepCopy .Values.config) | toYaml }}
{{- end }}

{{/*
Fails the render on combinations the schema cannot express.
*/}}
{{- define "aidc-operator.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled=true: only one operator may reconcile at a time" }}
{{- end }}
{{- if and (dig "objectStorage" "exportCredentials" false (.Values.config | default dict)) (not .Values.objectStorage.exportCredentials) }}
{{- fail "config.objectStorage.exportCredentials is set, but the operator would have no rule on Secrets to write them: set the chart value objectStorage.exportCredentials=true instead (it sets the operator config and grants the rules)" }}
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
