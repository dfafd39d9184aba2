import { z } from "zod";
import type { CrdDefinition } from "./definition.js";

/** A node of an OpenAPI v3 schema, as JSON. */
export type SchemaNode = { [key: string]: unknown };

/**
 * The CustomResourceDefinition object of one kind, as plain JSON (the generator writes
 * it as YAML; tests and `installCrds` send it to the API server as it is).
 */
export interface CustomResourceDefinitionManifest {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: "Namespaced" | "Cluster";
    versions: {
      name: string;
      served: true;
      storage: true;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: CrdDefinition["printerColumns"];
      schema: { openAPIV3Schema: SchemaNode };
    }[];
  };
}

/**
 * Keys a structural schema may carry, in the order they are written (description and
 * type first, nested properties last, so the YAML reads top-down). `$schema`, `$ref`,
 * `additionalProperties: false` and anything else zod might emit are refused or dropped.
 */
const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "nullable",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "example",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-int-or-string",
  "x-kubernetes-validations",
  "required",
  "additionalProperties",
  "items",
  "properties",
];

/** Keys dropped silently: meaningless to the API server or refused by it. */
const DROPPED = new Set(["$schema", "id", "title"]);

/**
 * Turns one node of zod's JSON Schema into a structural schema node: keys in
 * {@link KEY_ORDER} order, `additionalProperties: false` removed (Kubernetes prunes
 * unknown fields instead), nested nodes converted recursively. Throws on anything a
 * structural schema cannot express (`$ref`, unions, `propertyNames`...), naming the path.
 */
export function toStructural(node: SchemaNode, path = "$"): SchemaNode {
  const out: SchemaNode = {};
  for (const key of Object.keys(node)) {
    if (DROPPED.has(key)) continue;
    if (!KEY_ORDER.includes(key)) {
      throw new Error(`${path}: "${key}" is not allowed in a structural CRD schema`);
    }
  }
  for (const key of KEY_ORDER) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === "properties") {
      const props: SchemaNode = {};
      for (const [name, child] of Object.entries(value as Record<string, SchemaNode>)) {
        props[name] = toStructural(child, `${path}.${name}`);
      }
      out.properties = props;
    } else if (key === "items") {
      out.items = toStructural(value as SchemaNode, `${path}[]`);
    } else if (key === "additionalProperties") {
      if (value === false) continue;
      if (value === true) throw new Error(`${path}: additionalProperties: true is not structural`);
      out.additionalProperties = toStructural(value as SchemaNode, `${path}.*`);
    } else if (key === "minimum" && value === Number.MIN_SAFE_INTEGER) {
      // zod's .int() adds the safe-integer bounds. The minimum says nothing to a reader;
      // the maximum is kept: it refuses at apply time an integer the operator (in
      // JavaScript) could not read exactly, above 2^53 - 1.
    } else {
      out[key] = value;
    }
  }
  if (typeof out.type !== "string") throw new Error(`${path}: every node needs a single type`);
  return out;
}

/** The structural OpenAPI schema of a zod schema, inputs' view (defaulted fields optional). */
export function structuralSchema(schema: z.ZodType): SchemaNode {
  const json = z.toJSONSchema(schema, {
    target: "openapi-3.0",
    io: "input",
    reused: "inline",
    cycles: "throw",
    unrepresentable: "throw",
  }) as SchemaNode;
  return toStructural(json);
}

/** Labels on every generated CRD. */
export const CRD_LABELS = {
  "app.kubernetes.io/name": "aidc-operator",
  "app.kubernetes.io/part-of": "aidc-operator",
};

/**
 * Annotations on every generated CRD: a CRD outlives the install that created it, since
 * deleting it deletes every object of its kind. Argo CD prunes a CRD that leaves the
 * rendered set (a source switched to `skipCrds`, or to another Application) unless it
 * says `Prune=false`; `keep` says the same to Helm-aware tools (Helm already never
 * deletes `crds/`, nor Argo CD a CRD when it deletes an Application). kubectl ignores both.
 */
export const CRD_ANNOTATIONS = {
  "helm.sh/resource-policy": "keep",
  "argocd.argoproj.io/sync-options": "Prune=false",
};

/** The full CustomResourceDefinition of one kind. */
export function crdManifest(def: CrdDefinition): CustomResourceDefinitionManifest {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: `${def.plural}.${def.group}`,
      labels: { ...CRD_LABELS },
      annotations: { ...CRD_ANNOTATIONS },
    },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: [...def.shortNames],
        categories: [...def.categories],
      },
      scope: def.namespaced ? "Namespaced" : "Cluster",
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns.map((c) => ({ ...c })),
          schema: {
            openAPIV3Schema: {
              description: def.description,
              type: "object",
              required: ["spec"],
              properties: {
                apiVersion: {
                  description:
                    "Versioned schema of this representation of the object; aidc.io/v1alpha1.",
                  type: "string",
                },
                kind: {
                  description: `Kind of the object; ${def.kind}.`,
                  type: "string",
                },
                metadata: { type: "object" },
                spec: structuralSchema(def.spec),
                status: structuralSchema(def.status),
              },
            },
          },
        },
      ],
    },
  };
}
