import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { ensureInstalled } from './os-packages.ts';
import { portAnswers, waitFor } from './ports.ts';

export type Mosquitto = { url: string; stop: () => Promise<void> };

/** Starts the Mosquitto MQTT broker (Debian's package) on a loopback port, as a tenant's external destination. */
export async function startMosquitto(options: { port: number; dir: string; log: (line: string) => void }): Promise<Mosquitto> {
  const binary = ensureInstalled('mosquitto', 'mosquitto', options.log, 'or skip the external-destination tests');
  mkdirSync(options.dir, { recursive: true });
  const config = `${options.dir}/mosquitto.conf`;
  writeFileSync(config, [`listener ${options.port} 127.0.0.1`, 'allow_anonymous true', 'persistence false', ''].join('\n'));
  const child = spawn(binary, ['-c', config], { stdio: 'ignore' });
  await waitFor('mosquitto', async () => {
    if (!(await portAnswers(options.port))) throw new Error('not listening');
  });
  return {
    url: `mqtt://127.0.0.1:${options.port}`,
    stop: async () => {
      if (child.exitCode !== null) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await done;
    },
  };
}
