import path from 'node:path';
import { forkSpare } from '../pools/spare-worker';
import { isCommand } from './command';

/**
 * Imported first by openapi-mcp-server: when that CLI is the program being run, its api worker
 * is forked before the supervisor loads anything else, so both start at once (spare-worker.ts).
 * Not for --help or --version, which start no server.
 */
const API_WORKER = path.join(__dirname, '..', '..', 'workers', 'openapi', 'worker.js');
const args = process.argv.slice(2);
if (isCommand('openapi-mcp-server') && !args.some((arg) => /^(-h|--help|-v|--version)$/.test(arg))) {
  forkSpare(API_WORKER);
}
