import { readFileSync } from 'node:fs';
import type { SecureContext } from 'node:tls';
import type { buildConnector as BuildConnector } from 'undici';

/**
 * NODE_EXTRA_CA_CERTS, carried past a worker's start. Node reads that file when a process starts,
 * before any of its code runs, and builds a certificate store of its roots and the file's. For a
 * system bundle (Debian images set it to /etc/ssl/certs/ca-certificates.crt) that is ~50-90 ms of
 * CPU and ~2 MB in every process, though most workers never open a TLS connection and the rest
 * open one only on their first call. The supervisor forks each worker with the variable under
 * this name instead (moveExtraCaCerts); the worker puts it back for what it spawns
 * (restoreExtraCaCerts) and adds the certificates itself to its HTTPS connections, on the first
 * one (extraCaConnect).
 */
const MOVED = 'MCPVISOR_EXTRA_CA_CERTS';
/** Node flags under which its trusted roots are not the bundled ones: there, nothing is moved. */
const OTHER_ROOTS = /--use-(openssl|system)-ca\b/;

/**
 * The environment to fork a worker with: `env` with NODE_EXTRA_CA_CERTS moved aside, or `env`
 * itself when it has none or the worker's Node would trust other roots than its bundled ones.
 */
export function moveExtraCaCerts(env: NodeJS.ProcessEnv, execArgv: readonly string[]): NodeJS.ProcessEnv {
  const file = env.NODE_EXTRA_CA_CERTS;
  if (!file || OTHER_ROOTS.test(env.NODE_OPTIONS ?? '') || execArgv.some((arg) => OTHER_ROOTS.test(arg))) return env;
  const moved: NodeJS.ProcessEnv = { ...env, [MOVED]: file };
  delete moved.NODE_EXTRA_CA_CERTS;
  return moved;
}

/** The file a worker trusts besides Node's roots, when moveExtraCaCerts moved it; else undefined. */
let extraFile: string | undefined;

/**
 * In a worker, before it spawns anything: NODE_EXTRA_CA_CERTS back in `env` as the user set it,
 * for the processes the worker starts. Does nothing in a process not forked by moveExtraCaCerts.
 */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const file = env[MOVED];
  if (file === undefined) return;
  delete env[MOVED];
  env.NODE_EXTRA_CA_CERTS = file;
  extraFile = file;
}

/** Built on first use; null when the file could not be used (Node then trusts its roots alone). */
let context: SecureContext | null | undefined;

/**
 * Node's roots and the moved file's certificates, built once (~60 ms for a system bundle). A file
 * that cannot be read or parsed is reported as Node reports it at start, with a warning, and
 * ignored.
 */
function extraCaContext(file: string): SecureContext | undefined {
  if (context === undefined) {
    try {
      // Loaded here: the supervisor imports this module at its start, and node:tls costs ~5 ms.
      const tls = require('node:tls') as typeof import('node:tls');
      context = tls.createSecureContext({ ca: [...tls.rootCertificates, readFileSync(file, 'utf8')] });
    } catch (error) {
      context = null;
      process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(error as Error).message}`);
    }
  }
  return context ?? undefined;
}

/**
 * undici's `connect` option for a dispatcher of a worker: undefined (undici's default) unless
 * NODE_EXTRA_CA_CERTS was moved, else a connector whose HTTPS connections trust what Node would
 * have trusted with the variable set. The certificates are read on the first HTTPS connection.
 */
export function extraCaConnect(buildConnector: typeof BuildConnector): BuildConnector.connector | undefined {
  const file = extraFile;
  if (file === undefined) return undefined;
  const plain = buildConnector({});
  let secure: BuildConnector.connector | undefined;
  return (options, callback) => {
    if (options.protocol !== 'https:') return plain(options, callback);
    if (secure === undefined) {
      const ca = extraCaContext(file);
      secure = ca ? buildConnector({ secureContext: ca }) : plain;
    }
    return secure(options, callback);
  };
}

/** Builds the certificate store ahead of the first HTTPS connection (after a worker's `ready`). */
export function warmExtraCaCerts(): void {
  if (extraFile !== undefined) extraCaContext(extraFile);
}
