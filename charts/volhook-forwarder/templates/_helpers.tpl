{{/* The objects' name: the release's, so two releases in one namespace never collide. */}}
{{- define "volhook-forwarder.name" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "volhook-forwarder.selectorLabels" -}}
app.kubernetes.io/name: volhook-forwarder
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "volhook-forwarder.labels" -}}
{{ include "volhook-forwarder.selectorLabels" . }}
app.kubernetes.io/part-of: volhook
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The Secret the forwarder reads its signing secret from: the one named, or the chart's. */}}
{{- define "volhook-forwarder.secretName" -}}
{{- .Values.secret.existingSecret | default (include "volhook-forwarder.name" .) -}}
{{- end -}}

{{/* repository@digest when a digest is given (the tag is then ignored), else repository:tag. */}}
{{- define "volhook-forwarder.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}
