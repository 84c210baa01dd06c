// Preloaded into the service by bench/profile.ts (`node --import`): V8's sampling profiler at a
// 1 ms interval, started and stopped by SIGUSR2, each window written to PROFILE_DIR/<n>.cpuprofile.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const dir = process.env.PROFILE_DIR;
const session = new Session();
session.connect();
session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: 1000 }));
let running = false;
let n = 0;
writeFileSync(`${dir}/pid`, String(process.pid));
process.on('SIGUSR2', () => {
  running = !running;
  if (running) return session.post('Profiler.start');
  const file = `${dir}/${++n}.cpuprofile`;
  session.post('Profiler.stop', (error, result) => writeFileSync(file, error ? '' : JSON.stringify(result.profile)));
});
