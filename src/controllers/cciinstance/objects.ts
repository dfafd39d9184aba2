/**
 * The CciInstance as a Kubernetes object (the crd's type plus the runtime's object
 * shape), shared by the reconciler and the image saver.
 */
import type { CciInstance } from "../../crds/cciinstance.js";
import type { KubeObject } from "../../runtime/index.js";

/** A CciInstance as the cache holds it. */
export type CciObject = CciInstance & KubeObject;
