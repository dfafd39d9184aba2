/**
 * What the emulator keeps in memory per resource. Records hold times as epoch ms and
 * numbers as numbers; views.ts turns them into the wire shapes the spec describes.
 */
import type { NasProduct } from "../service/schemas/nas.js";
import type { StorageConfigItem } from "../service/schemas/storage-config.js";
import type { TrainingProduct } from "../service/schemas/training.js";

/** An open port of a pod. */
export interface PortRecord {
  port: number;
  protocol?: string;
  externalHost: string;
  externalPort: number;
}

/** A container of a pod. */
export interface ContainerRecord {
  containerName: string;
  status: string;
  reason: string;
  restartCount: number;
  podWebSSH: string;
}

/** A pod of a task. */
export interface PodRecord {
  podName: string;
  role: string;
  ip: string;
  nodeName: string;
  createdAt: number;
  containers: ContainerRecord[];
  systemPorts: PortRecord[];
  customPorts: PortRecord[];
}

/** An execution record of a task. */
export interface ExecInfoRecord {
  status: string;
  info: string;
  at: number;
}

/** A training task. */
export interface TaskRecord {
  id: string;
  name: string;
  desc: string;
  createType: string;
  trainingType?: string;
  trainingFramework?: string;
  imageType?: string;
  priority: number;
  image: string;
  productCode: string;
  workerCount: number;
  aidcId: number;
  storageConfigs: StorageConfigItem[];
  env: Record<string, string>;
  enableAutoRetry: boolean;
  maxRetryCount: number;
  enableTimeoutCancel: boolean;
  timeoutHours: number;
  startCommand: string;
  templateId?: string;
  sourceTaskId?: string;
  status: string;
  createdAt: number;
  startedAt?: number;
  updatedAt: number;
  /** List operations show the task from this time on. */
  visibleAt: number;
  /** Operations on its id know the task from this time on (detailVisibilityDelayMs). */
  knownAt?: number;
  execInfos: ExecInfoRecord[];
  pods: PodRecord[];
}

/** A NAS storage instance. */
export interface NasRecord {
  id: string;
  name: string;
  description: string;
  orderInstanceId: string;
  status: string;
  storageType: string;
  quotaGB: number;
  usedGB: number;
  mountPath: string;
  productCode: string;
  productName: string;
  aidcId: number;
  tenantId: string;
  createdAt: number;
  updatedAt: number;
  visibleAt: number;
  /** Operations on its id know the NAS from this time on (detailVisibilityDelayMs). */
  knownAt?: number;
}

/** A training template: its wire fields (framework spelled `trainingFramwork`) and times. */
export interface TemplateRecord {
  id: string;
  fields: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** What kind of create a subscription belongs to. */
export type SubscriptionKind = "training" | "nas";

/** An asynchronous create. */
export interface SubscriptionRecord {
  key: string;
  kind: SubscriptionKind;
  createdAt: number;
  /** When the result stops being Pending. */
  resolveAt: number;
  /** The outcome it resolves to (decided at acceptance, or forced through the admin API). */
  outcome: "Succeeded" | "Failed";
  /** Set once resolved and applied to the resource. */
  resolved: boolean;
  /** When it resolved (its result is forgotten subscriptionResultRetentionMs after). */
  resolvedAt?: number;
  instanceId?: string;
  message?: string;
}

/** Error details of a CCI instance. */
export interface CciErrorRecord {
  instanceStatus: string;
  instanceSubStatus: string;
  errorDescription: string;
  suggestion: string;
  errorDetail: string;
}

/** A saved image of a CCI instance. */
export interface CciImageRecord {
  imageId: string;
  imageName: string;
  tag: string;
  savedAt: number;
}

/**
 * A CCI instance: its wire fields (everything the list record and detail show except
 * the computed `now` and `saveImageStatus`), plus the emulator's bookkeeping.
 */
export interface CciRecord {
  id: string;
  fields: Record<string, unknown>;
  errorDetails?: CciErrorRecord;
  /** saveImageStatus is true until this time. */
  savingImageUntil: number;
  images: CciImageRecord[];
}

/** A block volume: the body it was created with, plus id and status. */
export interface StorageObjectRecord {
  id: string;
  fields: Record<string, unknown>;
}

/** A NAS product of the catalog, with the emulator's availability switch. */
export type NasProductRecord = NasProduct & {
  /** Whether nas-storage-available answers true and a subscription succeeds. */
  available: boolean;
};

/** A training specification of the catalog. */
export type TrainingProductRecord = TrainingProduct;
