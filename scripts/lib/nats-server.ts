import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { connectNats } from '@platform/shared';
import { waitFor } from './ports.ts';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes sure the nats-server binary is there: installs Debian's package when it is missing and
 * this process may (root with apt-get); otherwise stops with a message that says what to do.
 */
export function ensureNatsServerInstalled(log: (line: string) => void): string {
  if (onPath('nats-server')) return 'nats-server';
  if (process.getuid?.() === 0 && onPath('apt-get')) {
    log('nats-server is missing: installing it from the OS packages (apt-get install nats-server)');
    const install = () => execFileSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
      install();
    }
    if (onPath('nats-server')) return 'nats-server';
  }
  throw new Error('nats-server is not installed. Install it (Debian/Ubuntu: sudo apt-get install nats-server; or a release from the NATS project) or point NATS_URL at a running NATS server with JetStream.');
}

export type NatsServer = { url: string; mqttUrl?: string; process: ChildProcess; stop: () => Promise<void> };

/**
 * Starts nats-server with JetStream on loopback, its state in `dir`, and with `mqttPort` its MQTT
 * listener (MQTT clients read `tenants/<tenant>/events`, the NATS subject `tenants.<tenant>.events`).
 */
export async function startNatsServer(options: { port: number; mqttPort?: number; dir: string; name: string; log: (line: string) => void }): Promise<NatsServer> {
  const binary = ensureNatsServerInstalled(options.log);
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
