/** The kubeconfig path that means the pod's own service account, for an API the bot runs inside. */
export const IN_CLUSTER = "in-cluster";
