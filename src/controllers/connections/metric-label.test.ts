import { describe, expect, it } from "vitest";
import { serviceConnectionCrd } from "../../crds/serviceconnection.js";
import type { CacheReader } from "../../runtime/cache.js";
import type { KubeObject, ResourceDescriptor } from "../../runtime/resource.js";
import { connectionMetricLabel } from "./metric-label.js";

/** A cache holding the ServiceConnection `team-a` only. */
const cache = {
  get: (res: ResourceDescriptor, key: string) =>
    res.kind === serviceConnectionCrd.kind && key === "team-a"
      ? { metadata: { name: key } }
      : undefined,
} as unknown as CacheReader;

const chosen = (obj: KubeObject) =>
  (obj as { spec?: { connectionRef?: { name?: string } } }).spec?.connectionRef?.name;

describe("connectionMetricLabel", () => {
  const label = connectionMetricLabel({ chosenName: chosen }, cache);
  it.each([
    {
      case: "an object of the default connection",
      obj: { kind: "NasVolume", spec: {} },
      want: "_default",
    },
    {
      case: "an object of an existing connection",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "team-a" } } },
      want: "team-a",
    },
    {
      case: "an object naming a connection that does not exist",
      obj: { kind: "NasVolume", spec: { connectionRef: { name: "typo-1234" } } },
      want: "_missing",
    },
    {
      case: "a ServiceConnection: its own name",
      obj: { kind: "ServiceConnection", metadata: { name: "team-b" } },
      want: "team-b",
    },
  ])("labels $case as $want", ({ obj, want }) => {
    expect(label(obj as KubeObject)).toBe(want);
  });
});
