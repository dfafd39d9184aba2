import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { type RunOptions, runOperator } from "../../src/cli/run.js";
import type { Manager } from "../../src/runtime/manager.js";
import { eventually } from "./kube.js";

/** `aidc-operator run` in this process, as {@link runInProcess} started it. */
export interface OperatorInProcess {
  manager: Manager;
  /** The text of its /metrics (the config must set `server.port`, 0 for a free one). */
  metrics(): Promise<string>;
  /** Stops it as SIGTERM would; resolves with `run`'s exit code. */
  stop(): Promise<number>;
}

/**
 * `aidc-operator run` with `configFile` in this process (runOperator: the wiring of the
 * command, not the test operator's), against the test control plane; resolves once its
 * manager started.
 */
export async function runInProcess(
  configFile: string,
  options: Pick<RunOptions, "controllerFactories" | "env" | "logDestination"> = {},
): Promise<OperatorInProcess> {
  let stopSignal = () => {};
  let manager: Manager | undefined;
  const running = runOperator({
    configFile,
    kubeconfig: inject("kubeconfigPath"),
    env: {},
    ...options,
    stopSignal: new Promise<void>((resolve) => {
      stopSignal = resolve;
    }),
    onStarted: (m) => {
      manager = m;
    },
  });
  const started = await Promise.race([eventually(async () => manager), running]);
  if (typeof started === "number") throw new Error(`aidc-operator run exited with ${started}`);
  return {
    manager: started,
    metrics: () => fetch(`http://127.0.0.1:${started.port}/metrics`).then((r) => r.text()),
    stop: () => {
      stopSignal();
      return running;
    },
  };
}

/**
 * {@link runInProcess} with `config` written to a config file of its own (removed when
 * the operator stops).
 */
export async function runInProcessWith(
  config: Record<string, unknown>,
  options: Pick<RunOptions, "controllerFactories" | "env" | "logDestination"> = {},
): Promise<OperatorInProcess> {
  const dir = await mkdtemp(join(tmpdir(), "aidc-config-"));
  const configFile = join(dir, "config.json");
  await writeFile(configFile, JSON.stringify(config));
  const op = await runInProcess(configFile, options).catch(async (err: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw err;
  });
  return {
    ...op,
    stop: async () => {
      const code = await op.stop();
      await rm(dir, { recursive: true, force: true });
      return code;
    },
  };
}
