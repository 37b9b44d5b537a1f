import path from 'node:path';
import { forkSpare } from '../pools/spare-worker';

/**
 * Imported first by openapi-mcp-server: when that CLI is the program being run, its api worker
 * is forked before the supervisor loads anything else, so both start at once (spare-worker.ts).
 * Not for --help or --version, which start no server.
 */
const API_WORKER = path.join(__dirname, '..', '..', 'workers', 'openapi', 'worker.js');
const args = process.argv.slice(2);
if (require.main?.filename === path.join(__dirname, 'openapi-mcp-server.js') && !args.some((arg) => /^(-h|--help|-v|--version)$/.test(arg))) {
  forkSpare(API_WORKER);
}
