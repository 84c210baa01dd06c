import { execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdirSync } from 'node:fs';
import { ensureInstalled } from './os-packages.ts';
import { portAnswers, waitFor } from './ports.ts';

export type RabbitMQ = { url: string; stop: () => Promise<void> };

const id = (flag: string) => Number(execFileSync('id', [flag, 'rabbitmq']).toString().trim());

/**
 * Starts RabbitMQ (Debian's package) as its own user on loopback ports of its own (broker `port`,
 * Erlang distribution `port + 1`, epmd `port + 2`: take them from freePortRun(3)), its data in
 * `dir`; stop() ends the broker and its epmd.
 */
export async function startRabbitMQ(options: { port: number; dir: string; log: (line: string) => void }): Promise<RabbitMQ> {
  ensureInstalled('rabbitmq-server', 'rabbitmq-server', options.log, 'or skip the AMQP destination tests');
  mkdirSync(options.dir, { recursive: true });
  chownSync(options.dir, id('-u'), id('-g'));
  const { port, dir } = options;
  const env = [
    `HOME=${dir}`,
    `RABBITMQ_NODENAME=rt${port}@localhost`,
    'RABBITMQ_NODE_IP_ADDRESS=127.0.0.1',
    `RABBITMQ_NODE_PORT=${port}`,
    `RABBITMQ_DIST_PORT=${port + 1}`,
    `ERL_EPMD_PORT=${port + 2}`,
    `RABBITMQ_MNESIA_BASE=${dir}/mnesia`,
    `RABBITMQ_LOG_BASE=${dir}/log`,
    `RABBITMQ_ENABLED_PLUGINS_FILE=${dir}/enabled_plugins`,
    `RABBITMQ_CONFIG_FILES=${dir}/conf.d`,
  ].join(' ');
  const child = spawn('su', ['rabbitmq', '-s', '/bin/sh', '-c', `cd ${dir} && exec env ${env} /usr/lib/rabbitmq/bin/rabbitmq-server`], {
    stdio: 'ignore',
    detached: true,
  });
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  // Erlang starts slowly on a busy 2-core machine: allow two minutes, but stop waiting if it died.
  await waitFor(
    'rabbitmq',
    async () => {
      if (exited !== undefined) return;
      if (!(await portAnswers(port))) throw new Error('not listening');
    },
    120_000,
  );
  if (exited !== undefined) throw new Error(`rabbitmq-server exited (${exited}) before listening; its logs are in ${dir}/log`);
  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    stop: async () => {
      const done = new Promise((r) => child.once('exit', r));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        /* already gone */
      }
      await done;
      try {
        execFileSync('epmd', ['-port', String(port + 2), '-kill'], { stdio: 'ignore' });
      } catch {
        /* none left */
      }
    },
  };
}
