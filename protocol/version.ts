import { readFileSync } from 'node:fs';
import path from 'node:path';

let cached: string | undefined;

/**
 * The package version, read from the nearest package.json named mcpvisor (source or dist); `0.0.0`
 * when none. In protocol/ because the supervisor and workers both need it.
 */
export function packageVersion(): string {
  if (cached) return cached;
  let dir = __dirname;
  for (let i = 0; i < 5; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mcpvisor' && pkg.version) return (cached = pkg.version);
    } catch {
      // Not here; look one folder up.
    }
    dir = path.dirname(dir);
  }
  return (cached = '0.0.0');
}
