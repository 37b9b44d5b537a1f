import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './processes';
import { tempDir } from './temp';

/**
 * Entry modules of one tools file (`tools.cjs`) serving as a thread or a process toolset: the
 * file reads `process.env.KIND` to export `threadWorker(init)` or to call `runWorker(init)`.
 */
export const THREAD_ENTRY = "process.env.KIND = 'thread';\nmodule.exports = require('./tools.cjs');\n";
export const PROCESS_ENTRY = "process.env.KIND = 'process';\nrequire('./tools.cjs');\n";

/**
 * An operator's own project in a temporary directory (removed after the test file): its
 * `node_modules/mcpvisor` links to this checkout, as `npm install <checkout>` would, and `files`
 * (name → content) are written into it. Returns its path.
 */
export function ownProject(prefix: string, files: Record<string, string> = {}): string {
  const dir = tempDir(prefix);
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(ROOT, path.join(dir, 'node_modules', 'mcpvisor'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}
