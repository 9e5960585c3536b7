import type { ProbeTargetInput } from "./probe-target.ts";

export const PROBE_APP_LABEL = "netstress-probe";
export const PROBE_HOST_APP_LABEL = "netstress-probe-host";

/**
 * One probe pod: `netstress ext probe-server` pinned to a node (spec.nodeName, no scheduler
 * needed), under the restricted profile (non-root, no privilege escalation, every capability
 * dropped, RuntimeDefault seccomp, read-only root), with small requests and limits, no service
 * account token and no restarts (a probe pod that dies is a finding, not something to hide). Pure.
 */
export function probePodManifest(options: {
  name: string;
  namespace: string;
  nodeName: string;
  image: string;
  port: number;
  hostNetwork: boolean;
  role: "server" | "client" | "host";
  /** How the pod names itself in the intervals it reports. */
  label: string;
  targets: readonly ProbeTargetInput[];
  intervalMs: number;
  timeoutMs: number;
}): object {
  const command = [
    "netstress",
    "ext",
    "probe-server",
    "--port",
    String(options.port),
    "--name",
    options.label,
    ...(options.targets.length > 0
      ? [
          "--targets",
          JSON.stringify(options.targets),
          "--interval-ms",
          String(options.intervalMs),
          "--timeout-ms",
          String(options.timeoutMs),
        ]
      : []),
  ];
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: options.name,
      namespace: options.namespace,
      labels: {
        app: options.hostNetwork ? PROBE_HOST_APP_LABEL : PROBE_APP_LABEL,
        "netstress.io/probe-role": options.role,
      },
    },
    spec: {
      nodeName: options.nodeName,
      ...(options.hostNetwork ? { hostNetwork: true } : {}),
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 5,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      tolerations: [{ operator: "Exists", effect: "NoSchedule" }],
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "probe",
          image: options.image,
          command,
          ports: [{ name: "probe", containerPort: options.port, protocol: "TCP" }],
          readinessProbe: { httpGet: { path: "/healthz", port: options.port }, periodSeconds: 2 },
          resources: {
            requests: { cpu: "10m", memory: "64Mi" },
            limits: { cpu: "200m", memory: "256Mi" },
          },
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
        },
      ],
    },
  };
}
