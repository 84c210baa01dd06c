import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import { ensureInstalled } from './os-packages.ts';
import { waitFor } from './ports.ts';

export type NatsServer = { url: string; mqttUrl?: string; process: ChildProcess; stop: () => Promise<void> };

/**
 * Starts nats-server with JetStream on loopback, its state in `dir`, and with `mqttPort` its MQTT
 * listener (MQTT clients read `tenants/<tenant>/events`, the NATS subject `tenants.<tenant>.events`).
 */
export async function startNatsServer(options: { port: number; mqttPort?: number; dir: string; name: string; log: (line: string) => void }): Promise<NatsServer> {
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
  const child = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `nats://127.0.0.1:${options.port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`nats-server exited with ${code}: ${stderr}`))));
  exited.catch(() => undefined);
  await Promise.race([
    exited,
    waitFor('nats-server', async () => {
      const nc = await connectNats(url, 'probe');
      await nc.close();
    }),
  ]);
  return {
    url,
    mqttUrl: options.mqttPort ? `mqtt://127.0.0.1:${options.mqttPort}` : undefined,
    process: child,
    stop: async () => {
      if (child.exitCode !== null) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await done;
    },
  };
}
