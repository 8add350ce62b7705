{{/* Names and labels. */}}
{{- define "cairn.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "cairn.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "cairn.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "cairn.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: server, cortex or postgres. */}}
{{- define "cairn.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cairn.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "cairn.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "cairn.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "cairn.image" -}}
{{- printf "%s:%s" .Values.image.repository (toString .Values.image.tag) -}}
{{- end -}}

{{/* True (non-empty) when the chart runs its own PostgreSQL. */}}
{{- define "cairn.builtinPostgres" -}}
{{- if and (eq .Values.storage.backend "postgres") (not .Values.postgres.external) -}}true{{- end -}}
{{- end -}}

{{/* True when the Cortex runs as its own deployment (it shares the server's data otherwise). */}}
{{- define "cairn.cortexDeployment" -}}
{{- if and .Values.cortex.enabled (ne .Values.storage.backend "filesystem") -}}true{{- end -}}
{{- end -}}

{{- define "cairn.apiKeys" -}}
{{- if kindIs "slice" .Values.cairn.apiKeys -}}
{{- join "," .Values.cairn.apiKeys -}}
{{- else -}}
{{- .Values.cairn.apiKeys | default "" | toString -}}
{{- end -}}
{{- end -}}

{{/* Refuse combinations that cannot work, with a message that says what to change. */}}
{{- define "cairn.validate" -}}
{{- $backend := .Values.storage.backend -}}
{{- if not (has $backend (list "filesystem" "postgres" "s3")) -}}
{{- fail (printf "storage.backend must be filesystem, postgres or s3, not %q" $backend) -}}
{{- end -}}
{{- if and (eq $backend "postgres") .Values.postgres.external (not .Values.postgres.dsn) -}}
{{- fail "postgres.external is true: set postgres.dsn to the database's postgres:// connection string" -}}
{{- end -}}
{{- if and (eq $backend "postgres") (not (has .Values.postgres.searchIndex (list "postgres" "memory"))) -}}
{{- fail (printf "postgres.searchIndex must be postgres or memory, not %q" .Values.postgres.searchIndex) -}}
{{- end -}}
{{- if and (eq $backend "s3") (not .Values.s3.bucket) -}}
{{- fail "storage.backend is s3: set s3.bucket" -}}
{{- end -}}
{{- if not (regexMatch "^[0-9]+$" (toString .Values.cortex.heapMiB)) -}}
{{- fail (printf "cortex.heapMiB must be a whole number of MiB (about three quarters of cortex.resources.limits.memory; 0: Node's own choice), not %v" .Values.cortex.heapMiB) -}}
{{- end -}}
{{- if and (eq $backend "filesystem") .Values.filesystem.persistence.enabled (or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1)) -}}
{{- fail "the filesystem backend's volume belongs to one server pod: keep replicaCount 1 and autoscaling off, set filesystem.persistence.enabled=false (a volume per pod, lost with it), or use postgres or s3" -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by the server and the Cortex. Secrets come through envFrom. */}}
{{- define "cairn.env" -}}
- name: CAIRN_NAMESPACE
  value: {{ .Values.cairn.namespace | quote }}
- name: CAIRN_AGENT_ID
  value: {{ .Values.cairn.agentId | quote }}
- name: CAIRN_LOG_LEVEL
  value: {{ .Values.cairn.logLevel | quote }}
- name: CAIRN_RATE_LIMIT_RPM
  value: {{ .Values.cairn.rateLimitRpm | quote }}
- name: CAIRN_CORTEX_DEBOUNCE_MS
  value: {{ .Values.cortex.debounceMs | quote }}
{{- /* Webhook URLs start with the public address: behind the ingress's TLS, https and its host:
  the first TLS host that is not a wildcard, else the first ingress host a wildcard TLS host
  covers (*.example.com covers a.example.com, one label), else none (the address each request
  came to). A wildcard is never an address. */}}
{{- $publicUrl := .Values.cairn.publicUrl }}
{{- if and (not $publicUrl) .Values.ingress.enabled .Values.ingress.tls }}
{{- $tlsHost := "" }}
{{- $wildcards := list }}
{{- range .Values.ingress.tls }}
{{- range .hosts }}
{{- if hasPrefix "*." . }}
{{- $wildcards = append $wildcards (trimPrefix "*" .) }}
{{- else if and (not $tlsHost) (not (contains "*" .)) }}
{{- $tlsHost = . }}
{{- end }}
{{- end }}
{{- end }}
{{- if not $tlsHost }}
{{- range .Values.ingress.hosts }}
{{- $host := .host | default "" }}
{{- range $suffix := $wildcards }}
{{- $label := trimSuffix $suffix $host }}
{{- if and (not $tlsHost) (hasSuffix $suffix $host) $label (not (contains "." $label)) (not (contains "*" $label)) }}
{{- $tlsHost = $host }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- with $tlsHost }}
{{- $publicUrl = printf "https://%s" . }}
{{- end }}
{{- end }}
{{- with $publicUrl }}
- name: CAIRN_PUBLIC_URL
  value: {{ . | quote }}
{{- end }}
{{- if eq .Values.storage.backend "filesystem" }}
- name: CAIRN_DATA_DIR
  value: /data/.cairn
{{- else if eq .Values.storage.backend "postgres" }}
- name: CAIRN_SEARCH_INDEX
  value: {{ .Values.postgres.searchIndex | quote }}
{{- else if eq .Values.storage.backend "s3" }}
- name: CAIRN_OBJECT_BUCKET
  value: {{ .Values.s3.bucket | quote }}
- name: CAIRN_OBJECT_PREFIX
  value: {{ .Values.s3.prefix | quote }}
- name: AWS_REGION
  value: {{ .Values.s3.region | quote }}
{{- with .Values.s3.endpoint }}
- name: CAIRN_OBJECT_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- with .Values.cairn.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "cairn.envFrom" -}}
- secretRef:
    name: {{ include "cairn.fullname" . }}
{{- with .Values.cairn.existingSecret }}
- secretRef:
    name: {{ . }}
{{- end }}
{{- end -}}

{{/* With the built-in database, wait for it before starting: Cairn refuses to start
  without its backend, and a crash loop's back-off would delay the first install. */}}
{{- define "cairn.waitForPostgres" -}}
{{- if include "cairn.builtinPostgres" . -}}
initContainers:
  - name: wait-for-postgres
    image: {{ .Values.postgres.image }}
    command: ["sh", "-c", "until pg_isready -h {{ include "cairn.fullname" . }}-postgres -p 5432 -t 2; do sleep 2; done"]
    securityContext:
      {{- toYaml .Values.securityContext | nindent 6 }}
{{- end }}
{{- end -}}
