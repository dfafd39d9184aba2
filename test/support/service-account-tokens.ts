import { request } from "node:https";
import * as k8s from "@kubernetes/client-node";

/** A ServiceAccount bound to cluster-admin whose tokens a test mints and revokes. */
export interface TokenAccount {
  /** A token of the account bound to a new Secret `secret`: deleting the Secret revokes it. */
  mint(secret: string): Promise<string>;
  /** Revokes the tokens of `secret` (deletes it). */
  revoke(secret: string): Promise<void>;
  /** Deletes the ClusterRoleBinding (the namespace is the test's). */
  cleanup(): Promise<void>;
}

/** Makes ServiceAccount `account` in `namespace`, bound to cluster-admin (see {@link TokenAccount}). */
export async function tokenAccount(
  admin: k8s.KubeConfig,
  namespace: string,
  account = "aidc-operator",
): Promise<TokenAccount> {
  const core = admin.makeApiClient(k8s.CoreV1Api);
  const rbac = admin.makeApiClient(k8s.RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: account } } });
  const binding = `${namespace}-admin`;
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: binding },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "ClusterRole",
        name: "cluster-admin",
      },
      subjects: [{ kind: "ServiceAccount", name: account, namespace }],
    },
  });
  return {
    mint: async (secret) => {
      const s = await core.createNamespacedSecret({
        namespace,
        body: { metadata: { name: secret } },
      });
      const req = await core.createNamespacedServiceAccountToken({
        namespace,
        name: account,
        body: {
          spec: {
            audiences: ["https://kubernetes.default.svc"],
            expirationSeconds: 3600,
            boundObjectRef: {
              apiVersion: "v1",
              kind: "Secret",
              name: secret,
              uid: s.metadata?.uid,
            },
          },
        },
      });
      return req.status?.token ?? "";
    },
    revoke: async (secret) => {
      await core.deleteNamespacedSecret({ namespace, name: secret });
    },
    cleanup: async () => {
      await rbac.deleteClusterRoleBinding({ name: binding });
    },
  };
}

/** The status of a GET of `path` with `token`, straight to the API server. */
export function statusWithToken(
  server: string,
  ca: Buffer,
  token: string,
  path: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${server}${path}`,
      { ca, headers: { authorization: `Bearer ${token}` }, timeout: 5_000 },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", reject);
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.end();
  });
}
