import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import { ensureInstalled } from './os-packages.ts';
import { waitFor } from './ports.ts';
import { describeExit, exitOf, stopProcess, type Exit } from './processes.ts';

export type NatsServer = {
  url: string;
  mqttUrl?: string;
  process: ChildProcess;
  /** Settles once nats-server has exited, for whatever reason (also when it already had). */
  exited: Promise<Exit>;
  /** SIGTERM, SIGKILL if it takes longer than 10 s. */
  stop: () => Promise<void>;
};

/**
 * Starts nats-server with JetStream on loopback, its state in `dir`, and with `mqttPort` its MQTT
 * listener (MQTT clients read `tenants/<tenant>/events`, the NATS subject `tenants.<tenant>.events`).
 */
export async function startNatsServer(options: {
  port: number;
  mqttPort?: number;
  dir: string;
  name: string;
  log: (line: string) => void;
}): Promise<NatsServer> {
  const binary = ensureInstalled('nats-server', 'nats-server', options.log, 'or point NATS_URL at a running NATS server with JetStream');
  mkdirSync(`${options.dir}/jetstream`, { recursive: true });
  const configFile = `${options.dir}/nats.conf`;
  writeFileSync(
    configFile,
    [
      `server_name: ${options.name}`,
      `listen: 127.0.0.1:${options.port}`,
      `jetstream {`,
      `  store_dir: "${options.dir}/jetstream"`,
      `}`,
      ...(options.mqttPort ? [`mqtt {`, `  listen: 127.0.0.1:${options.mqttPort}`, `}`] : []),
      '',
    ].join('\n'),
  );
  // In a process group of its own: a Ctrl-C meant for the caller does not stop it before the
  // processes that use it; the caller stops it.
  const child = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `nats://127.0.0.1:${options.port}`;
  const exited = exitOf(child);
  const stop = () => stopProcess(child, { name: 'nats-server', signal: 'SIGTERM', graceMs: 10_000, log: options.log });
  try {
    await Promise.race([
      exited.then((exit) => Promise.reject(new Error(`nats-server exited (${describeExit(exit)}): ${stderr}`))),
      waitFor('nats-server', async () => {
        const nc = await connectNats(url, 'probe');
        await nc.close();
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, mqttUrl: options.mqttPort ? `mqtt://127.0.0.1:${options.mqttPort}` : undefined, process: child, exited, stop };
}
