import type * as k8s from "@kubernetes/client-node";
import { kubeRequest } from "./http.js";

const FLOWCONTROL = "/apis/flowcontrol.apiserver.k8s.io/v1";
const NAME = "aidc-test-few-seats";

/**
 * Puts every request of service account `account` into a priority level of its own
 * (API Priority and Fairness) that holds 1 of the shares of the API server's levels,
 * lends and borrows none, and rejects (429) what finds no free seat instead of
 * queueing it: its seats are the server's (`--max-requests-inflight` plus
 * `--max-mutating-requests-inflight`) × 1 / 246 shares, rounded up: 3 of the default
 * 600, 1 of 3. `remove` deletes the FlowSchema and the level.
 */
export async function fewSeats(
  kc: k8s.KubeConfig,
  account: { name: string; namespace: string },
): Promise<{ remove(): Promise<void> }> {
  const made = [
    await kubeRequest(kc, "POST", `${FLOWCONTROL}/prioritylevelconfigurations`, {
      body: {
        metadata: { name: NAME },
        spec: {
          type: "Limited",
          limited: {
            nominalConcurrencyShares: 1,
            lendablePercent: 0,
            borrowingLimitPercent: 0,
            limitResponse: { type: "Reject" },
          },
        },
      },
    }),
    await kubeRequest(kc, "POST", `${FLOWCONTROL}/flowschemas`, {
      body: {
        metadata: { name: NAME },
        spec: {
          priorityLevelConfiguration: { name: NAME },
          // Before the suggested schemas (service-accounts: 9000).
          matchingPrecedence: 500,
          distinguisherMethod: { type: "ByUser" },
          rules: [
            {
              subjects: [{ kind: "ServiceAccount", serviceAccount: account }],
              resourceRules: [
                {
                  verbs: ["*"],
                  apiGroups: ["*"],
                  resources: ["*"],
                  clusterScope: true,
                  namespaces: ["*"],
                },
              ],
              nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
            },
          ],
        },
      },
    }),
  ];
  const failed = made.find((r) => r.status !== 201);
  if (failed) throw new Error(`flow control objects not made: ${failed.status} ${failed.body}`);
  return {
    remove: async () => {
      await kubeRequest(kc, "DELETE", `${FLOWCONTROL}/flowschemas/${NAME}`);
      await kubeRequest(kc, "DELETE", `${FLOWCONTROL}/prioritylevelconfigurations/${NAME}`);
    },
  };
}
