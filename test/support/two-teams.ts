/**
 * Two teams, two accounts: the ServiceConnections the multi-tenant integration tests
 * share (service-connections*.test.ts). Team a's objects name their connection
 * (`connectionRef`); team b's namespace names its own (the `aidc.io/service-connection`
 * annotation).
 */

import { NAMESPACES } from "../../src/controllers/connections/registry.js";
import { SECRETS } from "../../src/controllers/connections/secrets.js";
import { serviceConnectionCrd } from "../../src/crds/serviceconnection.js";
import type { KubeClient } from "../../src/runtime/kube.js";

/** Where the two teams live and the keys of their accounts. */
export interface TwoTeams {
  ops: string;
  teamA: string;
  teamB: string;
  connA: string;
  connB: string;
  keyA: string;
  keyB: string;
  /** The service's (the emulator's) base URL. */
  baseUrl: string;
}

/**
 * Writes a Secret holding `apiKey` (key `apiKey`) and a ServiceConnection `name` to
 * `baseUrl` that reads it, allowing only the namespace `allowed`.
 */
export async function createConnection(
  kube: KubeClient,
  c: {
    secret: { namespace: string; name: string };
    apiKey: string;
    name: string;
    baseUrl: string;
    allowed: string;
    allowInsecureHttp?: boolean;
  },
): Promise<void> {
  await kube.create(SECRETS, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: c.secret,
    data: { apiKey: Buffer.from(c.apiKey).toString("base64") },
  });
  await kube.create(serviceConnectionCrd, {
    apiVersion: "aidc.io/v1alpha1",
    kind: "ServiceConnection",
    metadata: { name: c.name },
    spec: {
      baseUrl: c.baseUrl,
      ...(c.allowInsecureHttp ? { allowInsecureHttp: true } : {}),
      apiKeySecretRef: { ...c.secret, key: "apiKey" },
      allowedNamespaces: { names: [c.allowed] },
    },
  });
}

/**
 * Writes the keys' Secrets (`key-a`, `key-b` in `ops`), a ServiceConnection per team
 * allowing only its namespace, and team b's namespace annotation.
 */
export async function connectTwoTeams(kube: KubeClient, t: TwoTeams): Promise<void> {
  for (const [name, key, conn, allowed] of [
    ["key-a", t.keyA, t.connA, t.teamA],
    ["key-b", t.keyB, t.connB, t.teamB],
  ] as const) {
    await createConnection(kube, {
      secret: { namespace: t.ops, name },
      apiKey: key,
      name: conn,
      baseUrl: t.baseUrl,
      allowed,
      allowInsecureHttp: true,
    });
  }
  // team-b's objects use its account through the namespace's annotation.
  await kube.patch(
    NAMESPACES,
    { namespace: "", name: t.teamB },
    { metadata: { annotations: { "aidc.io/service-connection": t.connB } } },
  );
}

/** Removes the two connections (their finalizers first: the objects may still name them). */
export async function removeConnections(
  kube: KubeClient | undefined,
  names: readonly string[],
): Promise<void> {
  for (const name of names) {
    await kube
      ?.patch(serviceConnectionCrd, { namespace: "", name }, { metadata: { finalizers: null } })
      .catch(() => undefined);
    await kube?.delete(serviceConnectionCrd, { namespace: "", name }).catch(() => undefined);
  }
}
