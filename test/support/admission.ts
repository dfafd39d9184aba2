/**
 * Admission control for integration tests: an HTTPS admission webhook served by the
 * test, and its Mutating/ValidatingWebhookConfiguration, or a Validating or
 * MutatingAdmissionPolicy and its binding. The control plane is shared by every test
 * file, so each is scoped to one namespace (its namespaceSelector, or the binding's
 * matchResources).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { KubeClient } from "../../src/runtime/kube.js";
import {
  type KubeObject,
  type ResourceDescriptor,
  resourcePath,
} from "../../src/runtime/resource.js";
import { eventually } from "./kube.js";

const admission = (plural: string): ResourceDescriptor => ({
  group: "admissionregistration.k8s.io",
  version: "v1",
  plural,
  kind: "",
  namespaced: false,
});
export const MUTATING_WEBHOOKS = admission("mutatingwebhookconfigurations");
export const VALIDATING_WEBHOOKS = admission("validatingwebhookconfigurations");
export const ADMISSION_POLICIES = admission("validatingadmissionpolicies");
export const ADMISSION_POLICY_BINDINGS = admission("validatingadmissionpolicybindings");
export const MUTATING_POLICIES = admission("mutatingadmissionpolicies");
export const MUTATING_POLICY_BINDINGS = admission("mutatingadmissionpolicybindings");

/** The request of an AdmissionReview, as far as the tests read it. */
export interface AdmissionRequest {
  uid: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  subResource?: string;
  name: string;
  namespace: string;
  dryRun?: boolean;
  userInfo: { username: string };
  object?: KubeObject;
  oldObject?: KubeObject;
}

/** What a webhook answers: allowed or denied (with a message), and a JSON patch. */
export interface AdmissionAnswer {
  allowed: boolean;
  message?: string;
  patch?: Array<{ op: string; path: string; value?: unknown }>;
}

/** A handler: its answer, or a promise of it (a slow webhook). */
export type AdmissionHandler = (
  req: AdmissionRequest,
) => AdmissionAnswer | Promise<AdmissionAnswer>;

/** An HTTPS admission webhook on a loopback port, with a certificate of its own. */
export class AdmissionWebhook {
  /** Every request received, in order (dry runs included). */
  readonly requests: AdmissionRequest[] = [];
  handler: AdmissionHandler = () => ({ allowed: true });
  private server?: Server;
  caBundle = "";
  port = 0;

  async start(): Promise<this> {
    const dir = await mkdtemp(join(tmpdir(), "admission-webhook-"));
    const [key, cert] = [join(dir, "key.pem"), join(dir, "cert.pem")];
    await promisify(execFile)("openssl", [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"],
      ...["-keyout", key, "-out", cert, "-subj", "/CN=127.0.0.1"],
      ...["-addext", "subjectAltName=IP:127.0.0.1"],
    ]);
    const [keyPem, certPem] = await Promise.all([readFile(key), readFile(cert)]);
    await rm(dir, { recursive: true, force: true });
    this.caBundle = certPem.toString("base64");
    const server = createServer({ key: keyPem, cert: certPem }, (req, res) => {
      let body = "";
      req.on("data", (d) => {
        body += d;
      });
      req.on("end", async () => {
        const review = JSON.parse(body) as { request: AdmissionRequest };
        this.requests.push(review.request);
        const answer = await this.handler(review.request);
        const response = {
          uid: review.request.uid,
          allowed: answer.allowed,
          ...(answer.message ? { status: { code: 403, message: answer.message } } : {}),
          ...(answer.patch
            ? {
                patchType: "JSONPatch",
                patch: Buffer.from(JSON.stringify(answer.patch)).toString("base64"),
              }
            : {}),
        };
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response }),
        );
      });
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  /** The writes (not dry runs) of `name`, as `OPERATION` or `OPERATION/subresource`. */
  writesOf(name: string): string[] {
    return this.requests
      .filter((r) => r.name === name && !r.dryRun)
      .map((r) => (r.subResource ? `${r.operation}/${r.subResource}` : r.operation));
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}

/** Options of one webhook of a configuration. */
export interface WebhookOptions {
  /** Webhook name (a DNS name with at least 3 parts, as the API server requires). */
  name: string;
  namespace: string;
  /** The aidc.io resources it matches, e.g. ["nasvolumes", "nasvolumes/status"]. */
  resources: string[];
  /** Default CREATE and UPDATE. */
  operations?: string[];
  /** The webhook's URL, when not `hook`'s (a dead one). */
  url?: string;
  /** Only objects with these labels. */
  objectLabels?: Record<string, string>;
  /** How long the API server waits for it; default 5 s. */
  timeoutSeconds?: number;
}

const PROBE_LABEL = "admission.test/probe";

/**
 * Registers the webhook `hook` serves (or a dead `options.url`) as a mutating or
 * validating webhook configuration named as the webhook (failurePolicy Fail), matching
 * the namespace only.
 * Waits until the API server uses the configuration: a second webhook of it, served by
 * `hook` too, matches only the dry-run create of a probe object of `probe.res`
 * (labelled {@link PROBE_LABEL}), which the wait sends until `hook` sees it.
 */
export async function registerWebhook(
  kube: KubeClient,
  kind: "mutating" | "validating",
  hook: AdmissionWebhook,
  options: WebhookOptions,
  probe: { res: ResourceDescriptor; spec: Record<string, unknown> },
): Promise<() => Promise<void>> {
  const res = kind === "mutating" ? MUTATING_WEBHOOKS : VALIDATING_WEBHOOKS;
  const webhook = (
    name: string,
    url: string,
    resources: string[],
    ops: string[],
    labels?: Record<string, string>,
  ) => ({
    name,
    clientConfig: { url, caBundle: hook.caBundle },
    rules: [
      {
        apiGroups: ["aidc.io"],
        apiVersions: ["*"],
        resources,
        operations: ops,
        scope: "Namespaced",
      },
    ],
    namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": options.namespace } },
    ...(labels ? { objectSelector: { matchLabels: labels } } : {}),
    failurePolicy: "Fail",
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    timeoutSeconds: options.timeoutSeconds ?? 5,
  });
  const own = `https://127.0.0.1:${hook.port}/`;
  await kube.create(res, {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: kind === "mutating" ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration",
    metadata: { name: options.name },
    webhooks: [
      webhook(
        options.name,
        options.url ?? own,
        options.resources,
        options.operations ?? ["CREATE", "UPDATE"],
        options.objectLabels,
      ),
      webhook(`probe.${options.name}`, own, [probe.res.plural], ["CREATE"], {
        [PROBE_LABEL]: options.name,
      }),
    ],
  } as KubeObject);
  const probeName = `probe-${Math.random().toString(36).slice(2, 8)}`;
  await eventually(async () => {
    await dryRunProbe(kube, probe, options, probeName).catch(() => undefined);
    return hook.requests.some((r) => r.name === probeName);
  });
  return async () => {
    await kube.delete(res, { name: options.name, namespace: "" });
  };
}

/** A CEL validation of a ValidatingAdmissionPolicy. */
export interface PolicyValidation {
  expression: string;
  message: string;
}

/**
 * Registers a ValidatingAdmissionPolicy named `name` with `validations` over the aidc.io
 * `resources` and the core `coreResources` (CREATE and UPDATE), bound with action Deny
 * to the namespace only, and
 * waits until the API server applies it: a first validation of it denies a dry-run
 * create of a probe object labelled {@link PROBE_LABEL}. Resolves with its removal.
 */
export function registerPolicy(
  kube: KubeClient,
  options: { name: string; namespace: string; resources: string[]; coreResources?: string[] },
  validations: PolicyValidation[],
  probe: { res: ResourceDescriptor; spec: Record<string, unknown> },
): Promise<() => Promise<void>> {
  const probeMessage = `probe of policy ${options.name}`;
  const core = options.coreResources
    ? [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          operations: ["CREATE", "UPDATE"],
          resources: options.coreResources,
        },
      ]
    : [];
  return registerBoundPolicy(
    kube,
    "Validating",
    options,
    {
      matchConstraints: { resourceRules: [...aidcRules(options.resources, probe), ...core] },
      validations: [
        {
          expression: `!has(object.metadata.labels) || object.metadata.labels[?'${PROBE_LABEL}'].orValue('') != '${options.name}'`,
          message: probeMessage,
        },
        ...validations,
      ],
    },
    { validationActions: ["Deny"] },
    () =>
      dryRunProbe(kube, probe, options, `probe-${Date.now()}`).then(
        () => false,
        (err: unknown) => String(err).includes(probeMessage),
      ),
  );
}

/** A mutation of a MutatingAdmissionPolicy: a CEL JSON patch or apply configuration. */
export type PolicyMutation =
  | { patchType: "JSONPatch"; jsonPatch: { expression: string } }
  | { patchType: "ApplyConfiguration"; applyConfiguration: { expression: string } };

/**
 * Whether the API server serves MutatingAdmissionPolicy at admissionregistration.k8s.io/v1
 * (by default from Kubernetes 1.36; not on older versions the chart supports).
 */
export async function mutatingPoliciesServed(kube: KubeClient): Promise<boolean> {
  const list = (await kube.request("GET", "/apis/admissionregistration.k8s.io/v1")) as {
    resources?: Array<{ name: string }>;
  };
  return (list.resources ?? []).some((r) => r.name === MUTATING_POLICIES.plural);
}

/**
 * Registers a MutatingAdmissionPolicy (served by default from Kubernetes 1.36) named
 * `name` with `mutations` over the aidc.io `resources` (CREATE and UPDATE), bound to the
 * namespace only, and waits until the API server applies it: a first mutation of it
 * labels a dry-run create of a probe object labelled {@link PROBE_LABEL}. The others run
 * on every write they match (the probe's too): each decides in CEL what it changes.
 * Resolves with its removal.
 */
export function registerMutatingPolicy(
  kube: KubeClient,
  options: { name: string; namespace: string; resources: string[] },
  mutations: PolicyMutation[],
  probe: { res: ResourceDescriptor; spec: Record<string, unknown> },
): Promise<() => Promise<void>> {
  const probed = `${options.name}-probed`;
  return registerBoundPolicy(
    kube,
    "Mutating",
    options,
    {
      reinvocationPolicy: "Never",
      matchConstraints: { resourceRules: aidcRules(options.resources, probe) },
      mutations: [
        {
          patchType: "JSONPatch",
          jsonPatch: {
            expression: `has(object.metadata.labels) && object.metadata.labels[?'${PROBE_LABEL}'].orValue('') == '${options.name}' ? [JSONPatch{op: 'add', path: '/metadata/labels/probed', value: '${probed}'}] : []`,
          },
        },
        ...mutations,
      ],
    },
    {},
    async () => {
      const answer = await dryRunProbe(kube, probe, options, `probe-${Date.now()}`).catch(
        () => undefined,
      );
      return (answer as KubeObject | undefined)?.metadata?.labels?.probed === probed;
    },
  );
}

/** CREATE and UPDATE of the aidc.io `resources` and of the probe's. */
function aidcRules(resources: string[], probe: { res: ResourceDescriptor }) {
  return [
    {
      apiGroups: ["aidc.io"],
      apiVersions: ["*"],
      operations: ["CREATE", "UPDATE"],
      resources: [...new Set([...resources, probe.res.plural])],
    },
  ];
}

/**
 * Creates the `kind` AdmissionPolicy `options.name` (failurePolicy Fail, `spec`) and its
 * binding (`binding`, matching the namespace only), waits until `applied`, and resolves
 * with their removal.
 */
async function registerBoundPolicy(
  kube: KubeClient,
  kind: "Validating" | "Mutating",
  options: { name: string; namespace: string },
  spec: Record<string, unknown>,
  binding: Record<string, unknown>,
  applied: () => Promise<boolean>,
): Promise<() => Promise<void>> {
  const [policies, bindings] =
    kind === "Validating"
      ? [ADMISSION_POLICIES, ADMISSION_POLICY_BINDINGS]
      : [MUTATING_POLICIES, MUTATING_POLICY_BINDINGS];
  const apiVersion = "admissionregistration.k8s.io/v1";
  const metadata = { name: options.name };
  await kube.create(policies, {
    apiVersion,
    kind: `${kind}AdmissionPolicy`,
    metadata,
    spec: { failurePolicy: "Fail", ...spec },
  } as KubeObject);
  await kube.create(bindings, {
    apiVersion,
    kind: `${kind}AdmissionPolicyBinding`,
    metadata,
    spec: {
      policyName: options.name,
      ...binding,
      matchResources: {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": options.namespace } },
      },
    },
  } as KubeObject);
  await eventually(applied);
  return async () => {
    await kube.delete(bindings, { name: options.name, namespace: "" });
    await kube.delete(policies, { name: options.name, namespace: "" });
  };
}

/** A dry-run create of a probe object labelled {@link PROBE_LABEL} for `options.name`. */
function dryRunProbe(
  kube: KubeClient,
  probe: { res: ResourceDescriptor; spec: Record<string, unknown> },
  options: { name: string; namespace: string },
  name: string,
): Promise<unknown> {
  return kube.request(
    "POST",
    resourcePath(probe.res, options.namespace),
    { dryRun: "All" },
    {
      apiVersion: `${probe.res.group}/${probe.res.version}`,
      kind: probe.res.kind,
      metadata: { name, namespace: options.namespace, labels: { [PROBE_LABEL]: options.name } },
      spec: probe.spec,
    },
  );
}
