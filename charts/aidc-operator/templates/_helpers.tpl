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
Labels of the uninstall check's Job and pod: a name and component of their own, so the
metrics Service and the PodDisruptionBudget select only operator pods.
*/}}
{{- define "aidc-operator.uninstallCheckLabels" -}}
helm.sh/chart: {{ include "aidc-operator.chart" . }}
app.kubernetes.io/name: {{ include "aidc-operator.name" . }}-uninstall-check
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: uninstall-check
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

{{/*
The operator's config file (config.yaml in the ConfigMap): what the chart writes from
its values ("aidc-operator.chartConfig"), then `.Values.config` merged over it.
*/}}
{{- define "aidc-operator.config" -}}
{{- mustMergeOverwrite (include "aidc-operator.chartConfig" . | fromYaml) (deepCopy .Values.config) | toYaml }}
{{- end }}

{{/*
The operator config the chart writes from its values. The Lease's namespace is not
written: the operator uses its own (POD_NAMESPACE), so a kustomize namespace overlay
stays right.
*/}}
{{- define "aidc-operator.chartConfig" -}}
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
{{- /* The endpoint may come from `config` (merged over this), as the base URL may. */}}
{{- $endpoint := .endpoint | default (dig "objectStorage" "endpoint" "" ($.Values.config | default dict)) }}
{{- if $endpoint }}
{{- $os = dict "endpoint" $endpoint "region" .region "allowInsecureHttp" .allowInsecureHttp }}
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
{{- toYaml $config }}
{{- end }}
