{{/*
The operator Deployment: the unsharded one (`shard` ""), or one of `.Values.shards`
(`--shard-key`, its own pod labels). Called with (dict "root" $ "shard" key).
*/}}
{{- define "aidc-operator.deployment" -}}
{{- $r := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "aidc-operator.deploymentName" . }}
  namespace: {{ $r.Release.Namespace }}
  labels:
    {{- include "aidc-operator.podLabels" . | nindent 4 }}
spec:
  replicas: {{ $r.Values.replicas }}
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      {{- include "aidc-operator.podSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "aidc-operator.podLabels" . | nindent 8 }}
        {{- with $r.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed config rolls the pods; the config file is read at start.
        checksum/config: {{ include "aidc-operator.config" $r | sha256sum }}
        {{- with $r.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "aidc-operator.serviceAccountName" $r }}
      automountServiceAccountToken: true
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $r.Values.terminationGracePeriodSeconds }}
      {{- with $r.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $r.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
        fsGroup: 65532
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: operator
          image: {{ include "aidc-operator.image" $r | quote }}
          imagePullPolicy: {{ $r.Values.image.pullPolicy }}
          args:
            - run
            - --config=/etc/aidc-operator/config.yaml
            {{- with .shard }}
            - --shard-key={{ . }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            {{- if $r.Values.heapLimitMiB }}
            - name: NODE_OPTIONS
              value: --max-old-space-size={{ $r.Values.heapLimitMiB }}
            {{- end }}
            {{- with $r.Values.objectStorage.webIdentity }}
            {{- if or .roleArn .projectToken }}
            - name: AWS_WEB_IDENTITY_TOKEN_FILE
              value: {{ include "aidc-operator.webIdentityTokenDir" $r }}/token
            {{- end }}
            {{- if .roleArn }}
            - name: AWS_ROLE_ARN
              value: {{ .roleArn | quote }}
            - name: AWS_ROLE_SESSION_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            {{- with .stsEndpoint }}
            - name: AWS_ENDPOINT_URL_STS
              value: {{ . | quote }}
            {{- end }}
            {{- end }}
            {{- end }}
            {{- with $r.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $r.Values.metricsPort }}
              protocol: TCP
          livenessProbe:
            httpGet:
              path: /healthz
              port: metrics
            {{- toYaml $r.Values.livenessProbe | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: metrics
            {{- toYaml $r.Values.readinessProbe | nindent 12 }}
          resources:
            {{- toYaml $r.Values.resources | nindent 12 }}
          securityContext:
            runAsNonRoot: true
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            privileged: false
            capabilities:
              drop:
                - ALL
            seccompProfile:
              type: RuntimeDefault
          volumeMounts:
            - name: config
              mountPath: /etc/aidc-operator
              readOnly: true
            - name: api-key
              mountPath: {{ include "aidc-operator.apiKeyDir" $r }}
              readOnly: true
            {{- if $r.Values.objectStorage.credentialsSecret.name }}
            - name: s3-credentials
              mountPath: {{ include "aidc-operator.s3CredentialsDir" $r }}
              readOnly: true
            {{- end }}
            {{- if or $r.Values.objectStorage.webIdentity.roleArn $r.Values.objectStorage.webIdentity.projectToken }}
            - name: web-identity-token
              mountPath: {{ include "aidc-operator.webIdentityTokenDir" $r }}
              readOnly: true
            {{- end }}
            - name: tmp
              mountPath: /tmp
            {{- with $r.Values.extraVolumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        - name: config
          configMap:
            name: {{ include "aidc-operator.fullname" $r }}-config
        - name: api-key
          secret:
            secretName: {{ include "aidc-operator.apiKeySecretName" $r }}
            items:
              - key: {{ include "aidc-operator.apiKeySecretKey" $r }}
                path: api-key
            # 0o440 (owner and group read), written in decimal: YAML 1.1 (the API server)
            # reads 0440 as octal, YAML 1.2 (the generators, many tools) as 440 decimal.
            defaultMode: 288
        {{- with $r.Values.objectStorage.credentialsSecret }}
        {{- if .name }}
        - name: s3-credentials
          secret:
            secretName: {{ .name }}
            items:
              - key: {{ .accessKeyIdKey }}
                path: accessKeyId
              - key: {{ .secretAccessKeyKey }}
                path: secretAccessKey
              {{- if .sessionTokenKey }}
              - key: {{ .sessionTokenKey }}
                path: sessionToken
              {{- end }}
            defaultMode: 288
        {{- end }}
        {{- end }}
        {{- with $r.Values.objectStorage.webIdentity }}
        {{- if or .roleArn .projectToken }}
        - name: web-identity-token
          projected:
            sources:
              - serviceAccountToken:
                  audience: {{ .audience | quote }}
                  expirationSeconds: {{ int .expirationSeconds }}
                  path: token
        {{- end }}
        {{- end }}
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with $r.Values.extraVolumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $r.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $r.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- if $r.Values.affinity }}
      affinity:
        {{- toYaml $r.Values.affinity | nindent 8 }}
      {{- else if gt (int $r.Values.replicas) 1 }}
      # Standby pods on other nodes, so that one node failure does not stop the operator.
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: kubernetes.io/hostname
                labelSelector:
                  matchLabels:
                    {{- include "aidc-operator.podSelectorLabels" . | nindent 20 }}
      {{- end }}
      {{- with $r.Values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/*
Name of a Deployment: `<fullname>`, or `<fullname>-shard-<key>`.
*/}}
{{- define "aidc-operator.deploymentName" -}}
{{- if .shard }}
{{- printf "%s-shard-%s" (include "aidc-operator.fullname" .root) .shard }}
{{- else }}
{{- include "aidc-operator.fullname" .root }}
{{- end }}
{{- end }}

{{/*
Labels that select a Deployment's pods: a shard's pods are `<name>-shard` with their
`aidc.io/shard`, so that no two Deployments' selectors overlap.
*/}}
{{- define "aidc-operator.podSelectorLabels" -}}
{{- if .shard }}
app.kubernetes.io/name: {{ include "aidc-operator.name" .root }}-shard
app.kubernetes.io/instance: {{ .root.Release.Name }}
aidc.io/shard: {{ .shard }}
{{- else }}
{{- include "aidc-operator.selectorLabels" .root }}
{{- end }}
{{- end }}

{{/*
Labels of a Deployment and its pods.
*/}}
{{- define "aidc-operator.podLabels" -}}
{{- if .shard }}
helm.sh/chart: {{ include "aidc-operator.chart" .root }}
{{ include "aidc-operator.podSelectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: aidc-operator
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
{{- else }}
{{- include "aidc-operator.labels" .root }}
{{- end }}
{{- end }}
