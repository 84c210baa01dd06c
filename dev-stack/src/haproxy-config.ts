/** What a listener checks on each of its servers: an HTTP GET answered with `expectStatus`. */
export type HealthCheck = { path: string; expectStatus?: number };

export type HAProxyServer = {
  name: string;
  host: string;
  port: number;
  /** Where the health check is sent when not to `port` (Patroni's REST API beside Postgres). */
  checkPort?: number;
};

export type HAProxyListener = {
  name: string;
  port: number;
  /** Loopback unless given. */
  bind?: string;
  /** tcp passes bytes through (Postgres); http parses requests (the services' replicas). */
  mode: 'tcp' | 'http';
  /** One check per listener: HAProxy sends the same request to every server of a backend. */
  check: HealthCheck;
  servers: HAProxyServer[];
  /** Milliseconds between checks, failed checks before a server is down, passed ones before it is up. */
  interMs?: number;
  fall?: number;
  rise?: number;
  /** Cut the open connections of a server marked down, so that clients reconnect to another. */
  shutdownSessionsOnDown?: boolean;
  /**
   * HTTP mode only: a request whose server failed is sent again, up to `retries` times, to another
   * server (`option redispatch`), for the failures named in `on` (HAProxy's `retry-on`). HAProxy
   * itself retries any method; a request the server may already have acted on (anything but
   * `conn-failure`) is retried here only when it is idempotent: GET, HEAD, OPTIONS, PUT, DELETE, or
   * a request that carries an Idempotency-Key, which the services answer once per key.
   */
  retry?: { retries: number; on: ('conn-failure' | 'empty-response' | 'response-timeout')[] };
};

export type HAProxyTimeouts = { connectMs: number; clientMs: number; serverMs: number; checkMs: number };

export const defaultTimeouts: HAProxyTimeouts = { connectMs: 2_000, clientMs: 30 * 60_000, serverMs: 30 * 60_000, checkMs: 2_000 };

// Everything written into the file comes from the caller; a newline or space in a name would add
// directives of its own, so each word is checked before it is written.
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const HOST = /^[A-Za-z0-9_.:-]{1,253}$/;
const PATH = /^\/[A-Za-z0-9_.~/%?=&-]*$/;

function checked(what: string, value: string, pattern: RegExp): string {
  if (!pattern.test(value)) throw new Error(`HAProxy ${what} ${JSON.stringify(value)} may hold only ${pattern.source}`);
  return value;
}

function port(what: string, value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 65_535) throw new Error(`HAProxy ${what} ${value} is not a TCP port`);
  return value;
}

function listenerSection(listener: HAProxyListener): string[] {
  const name = checked('listener name', listener.name, NAME);
  if (listener.servers.length === 0) throw new Error(`HAProxy listener ${name} has no servers`);
  const status = listener.check.expectStatus ?? 200;
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`HAProxy listener ${name}: ${status} is not an HTTP status`);
  const serverNames = new Set<string>();
  const servers = listener.servers.map((server) => {
    const serverName = checked('server name', server.name, NAME);
    if (serverNames.has(serverName)) throw new Error(`HAProxy listener ${name} names server ${serverName} twice`);
    serverNames.add(serverName);
    const checkPort = server.checkPort === undefined ? '' : ` port ${port('check port', server.checkPort)}`;
    return `  server ${serverName} ${checked('host', server.host, HOST)}:${port('server port', server.port)} check${checkPort}`;
  });
  return [...head(name, listener), ...retryLines(name, listener), ...servers];
}

function retryLines(name: string, listener: HAProxyListener): string[] {
  const retry = listener.retry;
  if (!retry) return [];
  if (listener.mode !== 'http') throw new Error(`HAProxy listener ${name}: retries of requests need mode http`);
  if (!Number.isInteger(retry.retries) || retry.retries < 1 || retry.retries > 10)
    throw new Error(`HAProxy listener ${name}: ${retry.retries} retries is not 1 to 10`);
  const kinds = ['conn-failure', 'empty-response', 'response-timeout'];
  const unknown = retry.on.find((k) => !kinds.includes(k));
  if (unknown !== undefined || retry.on.length === 0) throw new Error(`HAProxy listener ${name}: retry-on takes ${kinds.join(', ')}`);
  return [
    '  option redispatch',
    `  retries ${retry.retries}`,
    `  retry-on ${retry.on.join(' ')}`,
    '  acl idempotent_method method GET HEAD OPTIONS PUT DELETE',
    '  acl idempotency_key req.hdr(idempotency-key) -m found',
    '  http-request disable-l7-retry unless idempotent_method || idempotency_key',
  ];
}

function head(name: string, listener: HAProxyListener): string[] {
  const status = listener.check.expectStatus ?? 200;
  const onDown = listener.shutdownSessionsOnDown === false ? '' : ' on-marked-down shutdown-sessions';
  return [
    `listen ${name}`,
    `  bind ${checked('bind address', listener.bind ?? '127.0.0.1', HOST)}:${port('listener port', listener.port)}`,
    `  mode ${listener.mode}`,
    `  option httpchk GET ${checked('check path', listener.check.path, PATH)}`,
    `  http-check expect status ${status}`,
    `  default-server inter ${listener.interMs ?? 1_000}ms fall ${listener.fall ?? 2} rise ${listener.rise ?? 1}${onDown}`,
  ];
}

const SOCKET = /^\/[A-Za-z0-9_./-]{1,100}$/;

/**
 * The whole haproxy.cfg for these listeners: pure, so that its rules are tested without a server.
 * With `runtimeSocket`, HAProxy's runtime API listens on that Unix socket (mode 0600, admin level):
 * counters per server (`show stat`) and a server's state (`set server`).
 */
export function renderHAProxyConfig(listeners: HAProxyListener[], timeouts: HAProxyTimeouts = defaultTimeouts, runtimeSocket?: string): string {
  const names = listeners.map((l) => l.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`HAProxy listener ${twice} is named twice`);
  const ports = listeners.map((l) => l.port);
  const shared = ports.find((p, i) => ports.indexOf(p) !== i);
  if (shared !== undefined) throw new Error(`HAProxy listeners share port ${shared}`);
  return [
    'global',
    '  maxconn 2000',
    ...(runtimeSocket === undefined ? [] : [`  stats socket ${checked('runtime socket', runtimeSocket, SOCKET)} mode 600 level admin`]),
    '',
    'defaults',
    '  retries 2',
    `  timeout connect ${timeouts.connectMs}ms`,
    `  timeout client ${timeouts.clientMs}ms`,
    `  timeout server ${timeouts.serverMs}ms`,
    `  timeout check ${timeouts.checkMs}ms`,
    ...listeners.flatMap((l) => ['', ...listenerSection(l)]),
    '',
  ].join('\n');
}

/** The Postgres listener: TCP to whichever node Patroni's REST API calls the primary right now. */
export function postgresPrimaryListener(options: {
  name?: string;
  port: number;
  nodes: { name: string; host: string; port: number; restPort: number }[];
}): HAProxyListener {
  return {
    name: options.name ?? 'postgres',
    port: options.port,
    mode: 'tcp',
    check: { path: '/primary', expectStatus: 200 },
    servers: options.nodes.map((n) => ({ name: n.name, host: n.host, port: n.port, checkPort: n.restPort })),
    interMs: 1_000,
    fall: 2,
    rise: 1,
    shutdownSessionsOnDown: true,
  };
}

/**
 * A service's replicas behind one HTTP listener: checked on /readyz every second, down after two
 * failed checks, up again after one; a request whose replica refused the connection, closed it
 * without an answer or did not answer in time goes to the other replica (at most twice), when it
 * may be sent twice (see `retry`).
 */
export function serviceReplicasListener(options: { name: string; port: number; replicas: { name: string; port: number }[] }): HAProxyListener {
  return {
    name: options.name,
    port: options.port,
    mode: 'http',
    check: { path: '/readyz', expectStatus: 200 },
    servers: options.replicas.map((r) => ({ name: r.name, host: '127.0.0.1', port: r.port })),
    interMs: 1_000,
    fall: 2,
    rise: 1,
    shutdownSessionsOnDown: true,
    retry: { retries: 2, on: ['conn-failure', 'empty-response', 'response-timeout'] },
  };
}
