import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSpecifiers } from "../../scripts/import-specifiers.js";
import { LAYER_RULES, layerViolations } from "../../scripts/layer-rules.js";

/** The layer check of `npm run lint` (scripts/layer-rules.ts, scripts/check-layers.ts). */

const root = "/repo";
const ruleOf = (layer: string) => {
  const rule = LAYER_RULES.find((r) => r.layer === layer);
  if (!rule) throw new Error(`no rule for ${layer}`);
  return rule;
};
const check = (layer: string, text: string) =>
  layerViolations(ruleOf(layer), join(root, "src", layer, "sub", "m.ts"), text, root);

describe("importSpecifiers, the one import parser of the lint checks", () => {
  it("takes every form of import, in order, packages and relative ones alike", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b.js";',
      'export { c } from "./c.js";',
      'export * from "./star.js";',
      'import "./side-effect.js";',
      "import 'zod';",
      "import {\n  f,\n  type G,\n} from './f.js';",
      'const e = await import(\n  "./e.js"\n);',
      'import * as k8s from "@kubernetes/client-node";',
      'const notAnImport = "from ./x.js";',
    ].join("\n");
    expect(importSpecifiers(text)).toEqual([
      "./a.js",
      "../b.js",
      "./c.js",
      "./star.js",
      "./side-effect.js",
      "zod",
      "./f.js",
      "./e.js",
      "@kubernetes/client-node",
    ]);
  });
});

describe("layerViolations", () => {
  it("reports a side-effect import of a forbidden layer (the old check's regex missed it)", () => {
    expect(check("runtime", 'import "../../controllers/index.js";\n')).toEqual([
      "src/runtime/sub/m.ts: src/runtime must not import src/controllers (../../controllers/index.js)",
    ]);
  });

  it("reports a multi-line import of a forbidden layer and a package outside a layer's own", () => {
    const text = 'import {\n  a,\n  b,\n} from "../../service/x.js";\nimport "yaml";\n';
    expect(check("crds", text)).toEqual([
      "src/crds/sub/m.ts: src/crds must not import src/service (../../service/x.js)",
      "src/crds/sub/m.ts: src/crds may import only zod (found yaml)",
    ]);
  });

  it("passes what the rule allows", () => {
    expect(check("crds", 'import { z } from "zod";\nimport { k } from "../kinds.js";\n')).toEqual(
      [],
    );
  });

  it("lets the service take the SOCKS5 tunnels and the proxy errors of the runtime and nothing else of it", () => {
    const text = [
      'import { socksTunnelOpener } from "../../runtime/socks-tunnel.js";',
      'import { ProxyConnectError } from "../../runtime/proxy-errors.js";',
      'import { proxyFor } from "../../runtime/kube-proxy.js";',
    ].join("\n");
    expect(check("service", text)).toEqual([
      "src/service/sub/m.ts: src/service may import of src/runtime only ^(socks-tunnel|proxy-errors)\\.ts$ (found ../../runtime/kube-proxy.js)",
    ]);
  });

  it("lets the emulator share the wire with the service, never the operator's own rules", () => {
    const text = [
      'import { nasInstanceSchema } from "../../service/schemas/nas.js";',
      'import type { EndpointName } from "../../service/endpoints.js";',
      'import { ServiceAccount } from "../../service/account.js";',
      'import { KindList } from "../../service/kind-list.js";',
      'import { endpoints } from "../../service/kinds/nasvolume.js";',
      'import { openPodPortBodySchema } from "../../service/kinds/trainingjob.pods.js";',
      'import { decide } from "../../controllers/nasvolume/decisions.js";',
    ].join("\n");
    const violations = check("emulator", text);
    expect(violations).toHaveLength(3);
    expect(violations[0]).toMatch(/src\/emulator may import of src\/service only .*account/);
    expect(violations[1]).toMatch(/kind-list\.js/);
    expect(violations[2]).toBe(
      "src/emulator/sub/m.ts: src/emulator must not import src/controllers (../../controllers/nasvolume/decisions.js)",
    );
  });
});
