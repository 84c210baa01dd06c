import { createConnection } from 'node:net';

/**
 * The return code of an MQTT 3.1.1 CONNACK for a login (0 accepted, 5 not authorized): one
 * CONNECT packet written by hand, as this package has no MQTT client.
 */
export function mqttLogin(url: string, user: string, pass: string): Promise<number> {
  const { hostname, port } = new URL(url);
  const text = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([Buffer.from([bytes.length >> 8, bytes.length & 0xff]), bytes]);
  };
  // Protocol level 4, flags: user name, password, clean session; keep-alive 60 s.
  const body = Buffer.concat([text('MQTT'), Buffer.from([4, 0xc2, 0, 60]), text(`probe-${port}`), text(user), text(pass)]);
  const packet = Buffer.concat([Buffer.from([0x10, body.length]), body]);
  return new Promise((resolve, reject) => {
    const socket = createConnection(Number(port), hostname, () => socket.write(packet));
    const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no CONNACK from ${url}`))), 10_000);
    socket.once('data', (answer: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      if (answer[0] === 0x20) resolve(answer[3]!);
      else reject(new Error(`not a CONNACK: ${answer.toString('hex')}`));
    });
    socket.once('error', (error) => (clearTimeout(timer), reject(error)));
  });
}
