#!/usr/bin/env node
/**
 * Renders deploy/nginx.conf.template for N mcpvisor instances on consecutive ports, the layout
 * of ecosystem.config.js (MCPVISOR_INSTANCES, MCPVISOR_BASE_PORT).
 *
 *   node deploy/render-nginx-conf.js > /etc/nginx/mcpvisor.conf
 *   MCPVISOR_INSTANCES=4 MCPVISOR_BASE_PORT=3000 NGINX_LISTEN=8080 node deploy/render-nginx-conf.js
 *   NGINX_UPSTREAMS=10.0.0.5:3000,10.0.0.6:3000 node deploy/render-nginx-conf.js   (other machines)
 *
 * Also `require('./deploy/render-nginx-conf.js').render(options)` (the integration tests use it).
 * Plain JavaScript with no dependencies so it runs before (and without) a build.
 */
'use strict';
const { readFileSync } = require('node:fs');
const { isIP } = require('node:net');
const path = require('node:path');
const { instanceLayout } = require('./instance-layout');

const TEMPLATE = path.join(__dirname, 'nginx.conf.template');

/**
 * @param {object} [options]
 * @param {string[]} [options.upstreams] `host:port` of every instance, in a stable order (the
 *   order gives the instance tags i1..iN); default: NGINX_UPSTREAMS (comma-separated), else
 *   `instances` consecutive ports from `basePort` on `upstreamHost`.
 * @param {number} [options.instances] default MCPVISOR_INSTANCES, else 1; 1 to 64.
 * @param {number} [options.basePort] default MCPVISOR_BASE_PORT, else 3000; the last port at most
 *   65535. Either one that is not such an integer throws, naming the variable (ecosystem.config.js's
 *   rules: empty is unset).
 * @param {string} [options.upstreamHost] default 127.0.0.1; an IPv6 address bare (`::1`) or in
 *   brackets. In `upstreams` and NGINX_UPSTREAMS an IPv6 address is in brackets: `[::1]:3000`.
 * @param {string} [options.listen] nginx `listen` value; default 8080 (or NGINX_LISTEN).
 * @param {string} [options.serverName] default `_` (any host; set the public name in production).
 * @param {string} [options.pidFile] default `nginx.pid` (relative to nginx's `-p` prefix).
 * @param {string} [options.errorLog] default `logs/error.log`.
 * @param {string} [options.accessLog] default `logs/access.log`; `off` disables it.
 * @param {string} [options.maxBody] default `4m` (mcpvisor's http.maxBodyBytes default).
 * @param {string} [options.streamTimeout] proxy read/send timeout, default `1h`.
 * @param {number} [options.workerProcesses] default 1.
 * @param {number} [options.workerConnections] default 4096 (two per proxied request).
 * @returns {string} the nginx.conf text.
 */
function render(options = {}) {
  const env = process.env;
  const given = options.upstreamHost ?? '127.0.0.1';
  // nginx reads `::1:3000` as host `::1` with a bad port: "invalid port in upstream".
  const host = isIP(given) === 6 ? `[${given}]` : given;
  const listed = env.NGINX_UPSTREAMS ? env.NGINX_UPSTREAMS.split(',').map((item) => item.trim()).filter(Boolean) : undefined;
  const upstreams = options.upstreams ?? listed ?? consecutive(host, options, env);
  if (upstreams.length === 0) throw new Error('render-nginx-conf: at least one upstream is needed');
  const bare = upstreams.find((address) => !address.startsWith('[') && (address.match(/:/g) ?? []).length > 1);
  if (bare !== undefined) throw new Error(`render-nginx-conf: upstream ${bare}: write an IPv6 address in brackets, as in [::1]:3000`);
  // max_fails=0: nginx never marks an instance down on its own. A stopped instance refuses
  // connections at once and nginx moves on to the next server, so nothing is lost by trying it;
  // marking it down (max_fails=1 fail_timeout=5s) made a rolling restart fail: the first
  // instance was still marked down when the second one went away, and nginx answered 502
  // "no live upstreams". Use max_fails with a short fail_timeout for instances on other
  // machines, where a dead host costs a connect timeout instead.
  const server = (address, extra = '') => `        server ${address} max_fails=0${extra};`;
  const escape = (text) => text.replace(/[.[\]]/g, (c) => `\\${c}`);
  const values = {
    // Tags are i1..iN in the order of `upstreams`; keep the order stable across reloads.
    ROUTE_BY_TAG: upstreams.map((_, i) => `        "~^i${i + 1}\\." mcpvisor_i${i + 1};`).join('\n'),
    TAG_BY_ADDRESS: upstreams.map((address, i) => `        "~(^|, )${escape(address)}$" i${i + 1};`).join('\n'),
    SHARED_SERVERS: upstreams.map((address) => server(address)).join('\n'),
    INSTANCE_UPSTREAMS: upstreams
      .map((address, i) => [
        `    upstream mcpvisor_i${i + 1} {`,
        server(address),
        ...upstreams.filter((other) => other !== address).map((other) => server(other, ' backup')),
        '        keepalive 16;',
        '    }',
      ].join('\n'))
      .join('\n'),
    LISTEN: String(options.listen ?? env.NGINX_LISTEN ?? 8080),
    SERVER_NAME: options.serverName ?? '_',
    PID_FILE: options.pidFile ?? 'nginx.pid',
    ERROR_LOG: options.errorLog ?? 'logs/error.log',
    ACCESS_LOG: options.accessLog ?? 'logs/access.log',
    MAX_BODY: options.maxBody ?? '4m',
    STREAM_TIMEOUT: options.streamTimeout ?? '1h',
    WORKER_PROCESSES: String(options.workerProcesses ?? 1),
    WORKER_CONNECTIONS: String(options.workerConnections ?? 4096),
  };
  let text = readFileSync(TEMPLATE, 'utf8').replace(/\{\{([A-Z_]+)\}\}/g, (match, name) => {
    if (!(name in values)) throw new Error(`render-nginx-conf: unknown placeholder ${match}`);
    return values[name];
  });
  if (values.ACCESS_LOG === 'off') text = text.replace(/access_log off mcp;/, 'access_log off;');
  return text;
}

/**
 * `instances` ports from `basePort` on `host`, the layout ecosystem.config.js starts: read from
 * the options, else MCPVISOR_INSTANCES and MCPVISOR_BASE_PORT, by the same rules as that file.
 */
function consecutive(host, options, env) {
  const { instances, basePort } = instanceLayout('render-nginx-conf', {
    MCPVISOR_INSTANCES: options.instances ?? env.MCPVISOR_INSTANCES,
    MCPVISOR_BASE_PORT: options.basePort ?? env.MCPVISOR_BASE_PORT,
  });
  return Array.from({ length: instances }, (_, i) => `${host}:${basePort + i}`);
}

module.exports = { render, TEMPLATE };

if (require.main === module) {
  // A refusal is one line and exit code 1, not a stack trace above an empty output file.
  try {
    process.stdout.write(render());
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
