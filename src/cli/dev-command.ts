import type { Command } from "commander";
import { startInterruptibly } from "./signals.js";

/** One line per aidc resource: the status of its Ready condition. */
const READY_JSONPATH =
  'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}';

/**
 * `aidc-operator dev`: the playground for a person. Prints the resources until they
 * are Ready, then the KUBECONFIG line; Ctrl-C stops everything cleanly, during start-up
 * too.
 */
export function registerDevCommand(program: Command): void {
  program
    .command("dev")
    .description(
      "run a local control plane + the service emulator + an S3 server + the operator, with the samples",
    )
    .option("--no-samples", "do not apply deploy/samples")
    .action(async (flags: { samples: boolean }) => {
      const out = (line: string) => process.stdout.write(`${line}\n`);
      const up = await startInterruptibly(
        // Loaded only here: `run` never needs the control plane, emulator and playground.
        async (signal) => (await import("./dev.js")).startPlayground({ ...flags, signal, out }),
        (pg) => pg.stop(),
        out,
      );
      if (!up) return;
      const { started: pg, interrupted } = up;
      process.stdout.write(
        `\nIn another terminal:\n\n${pg.shellSetup}\nkubectl get aidc -A\nPress Ctrl-C to stop.\n`,
      );
      let done = false;
      void interrupted.then(() => {
        done = true;
      });
      // Show the resources until all are Ready (or two minutes pass).
      const deadline = Date.now() + 120_000;
      while (!done && Date.now() < deadline) {
        const table = await pg.kubectl(["get", "aidc", "-A"]).catch((e: Error) => e.message);
        process.stdout.write(`\n${new Date().toISOString()}\n${table}`);
        const ready = await pg.kubectl(["get", "aidc", "-A", "-o", READY_JSONPATH]).catch(() => "");
        const states = ready.split("\n").filter(Boolean);
        if (states.length > 0 && states.every((s) => s === "True")) {
          process.stdout.write("\nall resources are Ready. Press Ctrl-C to stop.\n");
          break;
        }
        await Promise.race([interrupted, new Promise((r) => setTimeout(r, 3000))]);
      }
      await interrupted;
      process.stdout.write("stopping...\n");
      await pg.stop();
    });
}
