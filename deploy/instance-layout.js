/**
 * The instances of one machine, read from MCPVISOR_INSTANCES and MCPVISOR_BASE_PORT by
 * ecosystem.config.js (the ports pm2 starts) and by deploy/render-nginx-conf.js (the ports nginx
 * routes to): one reading, so that the two always agree. The renderer read them with `Number()`
 * on its own: an empty MCPVISOR_BASE_PORT, which pm2's file takes as unset (port 3000), routed
 * to port 0, `abc` to `127.0.0.1:NaN`, and 2.5 instances rendered 2.
 * Plain JavaScript without dependencies: both files run before (and without) a build.
 */
'use strict';

/**
 * An integer variable, `fallback` when unset or empty (blank). Anything else outside `min`..`max`
 * throws `<who>: <name> must be an integer from <min> to <max>, got '<raw>'`.
 */
function integerVar(who, env, name, fallback, min, max) {
  const raw = env[name];
  if (raw === undefined || String(raw).trim() === '') return fallback;
  const value = /^\s*\d+\s*$/.test(String(raw)) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new Error(`${who}: ${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  return value;
}

/**
 * `{ instances, basePort }` from `env` (default process.env): 1 to 64 instances (decision: each is a
 * whole supervisor with its pools), 3000 by default; the base port from 1 (0 would give every
 * instance a random port, which nginx cannot route to) up to where the last instance is 65535.
 * Errors are prefixed with `who`, the file that reads them.
 */
function instanceLayout(who, env = process.env) {
  const instances = integerVar(who, env, 'MCPVISOR_INSTANCES', 1, 1, 64);
  const basePort = integerVar(who, env, 'MCPVISOR_BASE_PORT', 3000, 1, 65_536 - instances);
  return { instances, basePort };
}

module.exports = { instanceLayout, integerVar };
