import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  allCrds,
  type CelRule,
  catalogCrds,
  crdManifest,
  GROUP,
  mutableFields,
  type SchemaNode,
  structuralSchema,
  TRAINING_JOB_MUTABILITY,
  TrainingJobSpec,
  toStructural,
  trainingJobCrd,
  VERSION,
} from "./index.js";

/** Every schema node below `node`, with its path. */
function* nodes(node: SchemaNode, path = "$"): Generator<[string, SchemaNode]> {
  yield [path, node];
  for (const [name, child] of Object.entries(
    (node.properties ?? {}) as Record<string, SchemaNode>,
  )) {
    yield* nodes(child, `${path}.${name}`);
  }
  if (node.items) yield* nodes(node.items as SchemaNode, `${path}[]`);
  if (typeof node.additionalProperties === "object") {
    yield* nodes(node.additionalProperties as SchemaNode, `${path}.*`);
  }
}

const schemaOf = (plural: string) => {
  const def = allCrds.find((d) => d.plural === plural);
  if (!def) throw new Error(`no CRD ${plural}`);
  const root = crdManifest(def).spec.versions[0]?.schema.openAPIV3Schema;
  if (!root) throw new Error("no schema");
  return root;
};

const prop = (node: SchemaNode, ...path: string[]): SchemaNode =>
  path.reduce((n, p) => {
    const next = p === "[]" ? n.items : (n.properties as Record<string, SchemaNode>)[p];
    if (!next) throw new Error(`no ${p}`);
    return next as SchemaNode;
  }, node);

describe("the generated CRDs", () => {
  it("cover the kinds with their names, short names, scope and the aidc category", () => {
    // These kinds among others (a kind added later, e.g. by npm run new-kind, too).
    expect(allCrds.map((d) => [d.kind, d.plural, d.shortNames[0]])).toEqual(
      expect.arrayContaining([
        ["TrainingJob", "trainingjobs", "tj"],
        ["NasVolume", "nasvolumes", "nas"],
        ["CciInstance", "cciinstances", "cci"],
        ["TrainingTemplate", "trainingtemplates", "ttpl"],
        ["ServiceConnection", "serviceconnections", "svcconn"],
        ["Bucket", "buckets", "bkt"],
        ["FileSystem", "filesystems", "fs"],
        ["BlockVolume", "blockvolumes", "bv"],
      ]),
    );
    // Every kind of the registry: names that no other kind takes.
    const unique = (names: string[]) => expect(new Set(names).size).toBe(names.length);
    unique(allCrds.map((d) => d.kind));
    unique(allCrds.map((d) => d.plural));
    unique(allCrds.flatMap((d) => d.shortNames));
    for (const def of allCrds) {
      const m = crdManifest(def);
      expect(m.metadata.name).toBe(`${def.plural}.${GROUP}`);
      // The catalogs (hundreds of products) stay out of `kubectl get aidc`.
      const catalog = catalogCrds.includes(def);
      expect(m.spec.names.categories).toEqual([catalog ? "aidc-catalog" : "aidc"]);
      expect(m.spec.scope).toBe(
        def.kind === "ServiceConnection" || catalog ? "Cluster" : "Namespaced",
      );
      expect(m.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
        [VERSION, true, true],
      ]);
      expect(m.spec.versions[0]?.subresources).toEqual({ status: {} });
    }
  });

  it("give every kind of the managed loop its spec fields: deletionPolicy, managementPolicies, connectionRef", () => {
    for (const def of allCrds.filter((d) => d.remote === "managed")) {
      const fields = Object.keys(prop(schemaOf(def.plural), "spec").properties ?? {});
      expect(fields, def.kind).toEqual(
        expect.arrayContaining(["deletionPolicy", "managementPolicies", "connectionRef"]),
      );
    }
  });

  it("are structural: no $ref, $schema, unions or additionalProperties false, and every node typed", () => {
    for (const def of allCrds) {
      const text = JSON.stringify(crdManifest(def));
      expect(text).not.toContain('"$ref"');
      expect(text).not.toContain('"$schema"');
      expect(text).not.toContain('"additionalProperties":false');
      expect(text).not.toMatch(/"(anyOf|oneOf|allOf|propertyNames)"/);
      for (const [path, node] of nodes(schemaOf(def.plural))) {
        expect(typeof node.type, path).toBe("string");
      }
    }
  });

  it("describe every field, so that kubectl explain helps", () => {
    for (const def of allCrds) {
      for (const [path, node] of nodes(schemaOf(def.plural))) {
        if (path.endsWith(".metadata") || path.endsWith(".*") || path.endsWith("[]")) continue;
        expect(node.description, `${def.kind} ${path}`).toBeTruthy();
      }
    }
  });

  it("point kubectl explain of a productCode at the catalog that lists the codes", () => {
    const said = (plural: string) =>
      String(prop(schemaOf(plural), "spec", "productCode").description);
    expect(said("nasvolumes")).toContain("kubectl get nasproducts");
    expect(said("trainingjobs")).toContain("kubectl get trainingproducts");
    expect(said("trainingtemplates")).toContain("kubectl get trainingproducts");
  });

  it("render string maps as additionalProperties of type string", () => {
    const env = prop(schemaOf("trainingjobs"), "spec", "env");
    expect(env.type).toBe("object");
    expect(env.additionalProperties).toEqual({ type: "string", maxLength: 4096 });
    expect(env.properties).toBeUndefined();
  });

  it("carry the defaults, so that the controller never writes the spec", () => {
    const spec = prop(schemaOf("trainingjobs"), "spec");
    // priority has none: an omitted one is inherited (controllers/trainingjob/inherited-fields.ts).
    expect(prop(spec, "priority").default).toBeUndefined();
    expect(prop(spec, "createType").default).toBe("DIRECT");
    expect(prop(spec, "deletionPolicy").default).toBe("Orphan");
    expect(prop(spec, "exposePorts").default).toBe(false);
    expect(prop(spec, "storage", "[]", "readOnly").default).toBe(true);
    expect(prop(schemaOf("nasvolumes"), "spec", "deletionPolicy").default).toBe("Orphan");
    // Defaulted fields are optional on input and present on output.
    expect(spec.required ?? []).not.toContain("createType");
    const parsed = TrainingJobSpec.parse({ image: "i", productCode: "p", workerCount: 1 });
    expect(parsed).toMatchObject({ createType: "DIRECT", deletionPolicy: "Orphan" });
  });

  it("guard exactly the fields of each kind's mutability, with a message that says whose rule it is", () => {
    for (const def of allCrds) {
      const spec = prop(schemaOf(def.plural), "spec");
      const rules = (spec["x-kubernetes-validations"] ?? []) as CelRule[];
      const transitions = rules.filter((r) => r.rule.includes("oldSelf"));
      const declared = def.mutability.map((r) => r.field);
      expect(transitions.map((r) => r.fieldPath?.slice(1)).sort()).toEqual([...declared].sort());
      const fields = Object.keys(spec.properties as object);
      for (const f of declared) expect(fields, `${def.kind}.spec.${f}`).toContain(f);
      for (const r of transitions) {
        expect(r.message).toMatch(
          /^\w+ is immutable( once set)? \(a (limit of the service|rule of the operator)\): /,
        );
      }
    }
    // On a TrainingJob the service's limits leave description and ports; exposePorts,
    // exportTo, deletionPolicy and managementPolicies are the operator's own and may change too.
    const tj = Object.keys(prop(schemaOf("trainingjobs"), "spec").properties as object);
    expect(mutableFields(TRAINING_JOB_MUTABILITY, tj).sort()).toEqual(
      [
        "deletionPolicy",
        "description",
        "exportTo",
        "exposePorts",
        "managementPolicies",
        "ports",
      ].sort(),
    );
  });

  it("say in each spec's description (kubectl explain) the fields its mutability lets change", () => {
    const wrong: string[] = [];
    for (const def of allCrds) {
      const spec = prop(schemaOf(def.plural), "spec");
      const fields = Object.keys(spec.properties as object);
      const text = String(spec.description ?? "");
      const every = /Every field(?: but ([\w ]+?))? may change/.exec(text);
      const listed = /(?:^|\. )(?:Only )?([\w, ]+?) may change/.exec(text);
      const said = every
        ? fields.filter((f) => !(every[1]?.split(" and ") ?? []).includes(f))
        : (listed?.[1]?.split(/, | and /) ?? []);
      if (!every && !listed) continue;
      const mutable = mutableFields(def.mutability, fields);
      if ([...said].sort().join() !== [...mutable].sort().join()) {
        wrong.push(`${def.kind}: says ${said.join(", ")}; may change: ${mutable.join(", ")}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("put the printer columns of the issue first, and READY, SYNCED and REASON on every kind", () => {
    const columns = (plural: string) =>
      allCrds
        .find((d) => d.plural === plural)
        ?.printerColumns.filter((c) => !c.priority)
        .map((c) => c.name);
    const conditions = ["Ready", "Synced", "Reason"];
    expect(columns("trainingjobs")).toEqual(["Status", "Task-ID", ...conditions, "Age"]);
    expect(columns("nasvolumes")).toEqual([
      "Phase",
      "Capacity",
      "Used",
      "Mount-Path",
      ...conditions,
      "Age",
    ]);
    expect(columns("cciinstances")).toEqual([
      "Status",
      "Sub-Status",
      "Instance",
      ...conditions,
      "Age",
    ]);
    expect(columns("trainingtemplates")).toEqual(["Template-ID", ...conditions, "Age"]);
    expect(trainingJobCrd.printerColumns.every((c) => c.jsonPath.startsWith("."))).toBe(true);
  });

  it("name each printer column once and none NAME, which kubectl prints first (-o wide too)", () => {
    for (const def of allCrds) {
      const names = def.printerColumns.map((c) => c.name.toUpperCase());
      expect(names, def.kind).not.toContain("NAME");
      expect(new Set(names).size, def.kind).toBe(names.length);
    }
  });
});

describe("integer bounds", () => {
  it("give every integer of every CRD a maximum, and every spec integer one of 32 bits", () => {
    for (const def of allCrds) {
      const schema = crdManifest(def).spec.versions[0]?.schema.openAPIV3Schema as SchemaNode;
      const ints = [...nodes(schema)].filter(([, n]) => n.type === "integer");
      expect(ints.length).toBeGreaterThan(0);
      for (const [path, n] of ints) {
        expect(n.maximum, `${def.kind} ${path}`).toBeTypeOf("number");
        expect(n.maximum as number, `${def.kind} ${path}`).toBeLessThanOrEqual(
          Number.MAX_SAFE_INTEGER,
        );
        if (path.startsWith("$.spec")) {
          expect(n.maximum as number, `${def.kind} ${path}`).toBeLessThanOrEqual(2 ** 31 - 1);
          // Documented where users read it: the description names the bound.
          expect(String(n.description), `${def.kind} ${path}`).toContain(String(n.maximum));
        }
      }
    }
  });
});

describe("toStructural", () => {
  it("refuses a $ref and names the path", () => {
    expect(() => toStructural({ type: "object", properties: { a: { $ref: "#/x" } } })).toThrow(
      '$.a: "$ref" is not allowed',
    );
  });

  it("refuses a union, which a structural schema cannot express", () => {
    expect(() => structuralSchema(z.object({ u: z.union([z.string(), z.number()]) }))).toThrow(
      /\$\.u: "anyOf" is not allowed/,
    );
  });

  it("drops additionalProperties false and $schema but keeps string maps", () => {
    const out = toStructural({
      $schema: "x",
      type: "object",
      additionalProperties: false,
      properties: { m: { type: "object", additionalProperties: { type: "string" } } },
    });
    expect(out).toEqual({
      type: "object",
      properties: { m: { type: "object", additionalProperties: { type: "string" } } },
    });
  });
});
