import { describe, expect, it } from "vitest";
import { buildNotice } from "./controlplane.js";

describe("the control plane's build notice", () => {
  it("says nothing when every binary is cached", () => {
    const out: string[] = [];
    const progress = buildNotice((l) => out.push(l));
    progress("[controlplane] etcd: cached in /cache/k8s-v1.36.3-r3");
    progress("[controlplane] kube-apiserver: cached in /cache/k8s-v1.36.3-r3");
    expect(out).toEqual([]);
  });

  it("says once that the first run builds, then names each binary it builds", () => {
    const out: string[] = [];
    const progress = buildNotice((l) => out.push(l));
    progress("[controlplane] etcd: cached in /cache/k8s-v1.36.3-r3");
    progress(
      "[controlplane] kube-controller-manager: building k8s.io/kubernetes/cmd/kube-controller-manager (first run only; this takes a while)",
    );
    progress("[controlplane] kube-controller-manager: built in 300s");
    progress(
      "[controlplane] helm: building helm.sh/helm/v3/cmd/helm (first run only; this takes a while)",
    );
    expect(out).toEqual([
      "building the control-plane binaries (first run only, ~5 min)...",
      "[controlplane] kube-controller-manager: building k8s.io/kubernetes/cmd/kube-controller-manager (first run only; this takes a while)",
      "[controlplane] helm: building helm.sh/helm/v3/cmd/helm (first run only; this takes a while)",
    ]);
  });
});
