// Lock-out replay (docs/adr/0023-rate-limits.md): a stranger who knows an access key id sends wrong
// logins for it, BENCH_ATTACK_RATE a second (10) spread over BENCH_ADDRESSES loopback addresses (10,
// 127.0.0.2 …), while the rightful client logs in with the right secret from 127.0.0.1 every
// BENCH_LOGIN_EVERY_S (10) for BENCH_SECONDS (60), with the service's default LOGIN_* settings.
// Counts the rightful client's logins answered 200 (all of them, when blocks are per key and
// address) and what the stranger got. `npm run bench:login-lockout`.
import { call } from '@platform/test-support/http';
import { createAccessKey } from '@platform/management-service/admin/provisioning';
import { record, startBenchPlatform } from './lib/harness.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const ATTACK_RATE = Number(process.env.BENCH_ATTACK_RATE ?? 10);
const ADDRESSES = Number(process.env.BENCH_ADDRESSES ?? 10);
const LOGIN_EVERY_S = Number(process.env.BENCH_LOGIN_EVERY_S ?? 10);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const platform = await startBenchPlatform();
try {
  const key = await createAccessKey(platform.db, platform.tenantId);
  const login = (from: string, secret: string) =>
    call(`${platform.managementUrl}/auth/login/`, { body: { access_key_id: key.access_key_id, secret_access_key: secret }, from });
  const strangers = Array.from({ length: ADDRESSES }, (_, i) => `127.0.0.${i + 2}`);
  const stranger = new Map<number, number>();
  const rightful: { status: number; ms: number }[] = [];
  const deadline = Date.now() + SECONDS * 1000;

  const attack = (async () => {
    const pending: Promise<void>[] = [];
    for (let i = 0; Date.now() < deadline; i++) {
      pending.push(login(strangers[i % strangers.length]!, 'wrong').then((res) => void stranger.set(res.status, (stranger.get(res.status) ?? 0) + 1)));
      await sleep(1000 / ATTACK_RATE);
    }
    await Promise.all(pending);
  })();
  // The first login after the attack began, then one every LOGIN_EVERY_S.
  await sleep(Math.min(LOGIN_EVERY_S * 1000, 5000));
  while (Date.now() < deadline) {
    const started = performance.now();
    const res = await login('127.0.0.1', key.secret_access_key);
    rightful.push({ status: res.status, ms: Math.round(performance.now() - started) });
    console.log(`[bench] rightful login: ${res.status}`);
    await sleep(LOGIN_EVERY_S * 1000);
  }
  await attack;

  const succeeded = rightful.filter((r) => r.status === 200).length;
  const strangerCounts = Object.fromEntries([...stranger].sort(([a], [b]) => a - b));
  record(
    'login-lockout',
    {
      seconds: SECONDS,
      attack_rate: ATTACK_RATE,
      addresses: ADDRESSES,
      login_every_s: LOGIN_EVERY_S,
      rightful: { attempts: rightful.length, succeeded, ms: rightful.map((r) => r.ms) },
      stranger: strangerCounts,
    },
    [
      '### Failed-login lock-out (`npm run bench:login-lockout`)',
      '',
      `A stranger sends ${ATTACK_RATE} wrong logins a second for one access key id from ${ADDRESSES} loopback addresses for ${SECONDS} s; the rightful client logs in with the right secret from its own address every ${LOGIN_EVERY_S} s; default LOGIN_* settings; measured ${new Date().toISOString().slice(0, 10)} on this 2-core machine.`,
      '',
      '| who | logins | answered |',
      '|---|---|---|',
      `| rightful client | ${rightful.length} | ${succeeded} × 200 (${rightful.map((r) => r.ms).join(', ')} ms) |`,
      `| stranger | ${[...stranger.values()].reduce((a, b) => a + b, 0)} | ${Object.entries(strangerCounts)
        .map(([status, n]) => `${n} × ${status}`)
        .join(', ')} |`,
      '',
    ].join('\n'),
  );
  if (succeeded !== rightful.length) process.exitCode = 1;
} finally {
  await platform.stop();
}
