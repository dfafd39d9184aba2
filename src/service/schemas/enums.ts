/**
 * The service's enumerations, their canonical TypeScript spelling, and the letter case
 * each operation writes on the wire. The spec spells the values differently per table
 * (task create: `pre_training`, `pytorch`; template: `PRE_TRAINING`, `PyTorch`) and
 * says the field list decides; values are therefore matched ignoring case (and `_`,
 * `-`, spaces: `matchEnum` in primitives.ts) and written in the case of the operation's
 * own field list.
 */
/** Training types (canonical spelling: the template table). */
export const TRAINING_TYPES = ["PRE_TRAINING", "HPC"] as const;
/** A training type. */
export type TrainingType = (typeof TRAINING_TYPES)[number];

/** Training frameworks (canonical spelling: the template table). */
export const TRAINING_FRAMEWORKS = ["PyTorch", "DeepSpeed", "MPI", "TensorFlow"] as const;
/** A training framework. */
export type TrainingFramework = (typeof TRAINING_FRAMEWORKS)[number];

/** Image types; must correspond to the image address. */
export const IMAGE_TYPES = ["general", "application", "private"] as const;
/** An image type. */
export type ImageType = (typeof IMAGE_TYPES)[number];

/** How a task is created. */
export const CREATE_TYPES = ["DIRECT", "COPY", "TEMPLATE"] as const;
/** A task create type. */
export type CreateType = (typeof CREATE_TYPES)[number];

/** Direction of a NAS capacity change. */
export const SCALE_TYPES = ["ScaleUp", "ScaleDown"] as const;
/** A NAS scale type. */
export type ScaleType = (typeof SCALE_TYPES)[number];

/** Protocols of a custom pod port. */
export const PORT_PROTOCOLS = ["http", "https"] as const;
/** A custom port protocol. */
export type PortProtocol = (typeof PORT_PROTOCOLS)[number];

/** Wire spelling of the training type in a task create request (its field list). */
export const TASK_CREATE_WIRE_TRAINING_TYPE: Record<TrainingType, string> = {
  PRE_TRAINING: "pre_training",
  HPC: "HPC",
};

/** Wire spelling of the framework in a task create request (its field list). */
export const TASK_CREATE_WIRE_FRAMEWORK: Record<TrainingFramework, string> = {
  PyTorch: "pytorch",
  DeepSpeed: "deepspeed",
  MPI: "mpi",
  TensorFlow: "tensorflow",
};
