/**
 * pm2 start file: `pm2 start ecosystem.config.js` (see README "Production").
 *
 * Fork mode, one instance per port, on purpose: MCP sessions live in one process, and pm2's
 * cluster mode spreads requests round-robin with no session affinity, so a session's requests
 * would reach processes that do not know it. Run several instances on different ports behind a
 * load balancer with session affinity to scale out: deploy/nginx.conf.template, rendered by
 * deploy/render-nginx-conf.js, tags each session id with its instance (hashing `Mcp-Session-Id`
 * cannot work: the id is made after nginx routed the initialize). Reload them one at a time
 * (docs/production.md) while the others take new sessions.
 */
const os = require('node:os');
const path = require('node:path');
const { instanceLayout } = require('./deploy/instance-layout');

// MCPVISOR_INSTANCES (1 to 64, default 1) and MCPVISOR_BASE_PORT (default 3000), read as
// deploy/render-nginx-conf.js reads them, so that nginx routes to the ports started here. A value
// that is not such an integer stops `pm2 start` naming it: `Number('abc')` gave no app at all, and
// pm2 started nothing and said nothing; `MCPVISOR_BASE_PORT=abc` gave each instance `--port NaN`.
const { instances: INSTANCES, basePort: BASE_PORT } = instanceLayout('ecosystem.config.js');
// pm2 resolves a relative script, and runs the app, in the directory `pm2 start` was typed in:
// `pm2 start /srv/mcpvisor/ecosystem.config.js` from anywhere else said `Script not found`. The
// app runs in the checkout; a relative MCPVISOR_CONFIG means the directory it was typed in, and
// `~/…` the home directory, as the server reads it (config/paths.ts): resolved here first, a
// quoted `MCPVISOR_CONFIG='~/mcpvisor.yaml'` became `<that directory>/~/mcpvisor.yaml`.
const GIVEN = process.env.MCPVISOR_CONFIG;
const CONFIG = GIVEN ? path.resolve(GIVEN === '~' || GIVEN.startsWith('~/') ? path.join(os.homedir(), GIVEN.slice(1)) : GIVEN) : undefined;

/**
 * How long the supervisor drains before it stops (http.shutdownGraceMs, default 10 s), which pm2
 * must outwait before it sends SIGKILL: read from MCPVISOR_CONFIG's file with the server's own
 * reader (JSON or YAML). A fixed 15 s kill_timeout cut any longer drain short with SIGKILL. A
 * file that cannot be read is left to the server, which refuses it naming why.
 */
function drainGraceMs() {
  const DEFAULT = 10_000;
  if (!CONFIG) return DEFAULT;
  let grace;
  try {
    grace = require('./dist/config/load').readConfigFile(CONFIG)?.http?.shutdownGraceMs;
  } catch {
    return DEFAULT;
  }
  // pm2 waits with a Node timer, which fires at once past 2^31 - 1 ms.
  return Number.isInteger(grace) && grace >= 0 ? Math.min(grace, 2 ** 31 - 1 - 5_000) : DEFAULT;
}
const KILL_TIMEOUT_MS = drainGraceMs() + 5_000;

module.exports = {
  apps: Array.from({ length: INSTANCES }, (_, i) => ({
    name: INSTANCES === 1 ? 'mcpvisor' : `mcpvisor-${i + 1}`,
    cwd: __dirname,
    script: path.join(__dirname, 'dist', 'supervisor', 'cli', 'mcpvisor.js'),
    args: ['--transport', 'http', '--port', String(BASE_PORT + i), ...(CONFIG ? ['--config', CONFIG] : [])],
    exec_mode: 'fork',
    instances: 1,
    env: { NODE_ENV: 'production' },
    // Logs: pino JSON on stderr lands in pm2's error log; stdout stays empty in HTTP mode.
    merge_logs: true,
    time: false,
    // Restart policy: a process that dies within 10 s of starting counts as a failed start; after
    // 10 of those pm2 gives up instead of spinning, and says `errored`. No restart delay: with
    // exp_backoff_restart_delay (or restart_delay) pm2 6 went on to show a dead app `online` with
    // pid 0 after giving up, so a check of `pm2 jlist` saw nothing wrong.
    min_uptime: 10_000,
    max_restarts: 10,
    // The supervisor's own memory is sessions and routing; workers are separate processes.
    max_memory_restart: '1G',
    kill_timeout: KILL_TIMEOUT_MS,
    // pm2 sends SIGINT by default; the supervisor drains on SIGINT and SIGTERM alike. Only the
    // supervisor is signalled: it stops its own workers after draining (pm2's tree kill would end
    // them first, failing the calls being drained).
    shutdown_with_message: false,
    treekill: false,
    // Online only once the HTTP port listens (the supervisor sends 'ready'), so `pm2 reload`
    // restarts the next instance only when this one serves again.
    wait_ready: true,
    listen_timeout: 60_000,
    autorestart: true,
  })),
};
