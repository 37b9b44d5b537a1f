import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fixture } from './processes';
import { tempDir } from './temp';

/** Writes a config file into a fresh temporary folder (removed after the file's tests) and returns its path. */
export function writeConfig(config: Record<string, unknown>, name = 'config.json'): string {
  const dir = tempDir('mcpvisor-test-');
  const file = path.join(dir, name);
  writeFileSync(file, name.endsWith('.json') ? JSON.stringify(config, null, 2) : String(config));
  return file;
}

/** A config that serves only the test fixture workers (no shell, no web). */
export function fixtureConfig(overrides: { process?: Record<string, unknown>; thread?: Record<string, unknown> | false; root?: Record<string, unknown> } = {}): Record<string, unknown> {
  const toolsets: Record<string, unknown>[] = [
    { name: 'test', module: fixture('test-worker'), workers: 1, concurrency: 4, callTimeoutMs: 5000, ...overrides.process },
  ];
  if (overrides.thread !== false) {
    toolsets.push({ name: 'threads', namespace: 'th', kind: 'thread', module: fixture('test-thread-worker'), workers: 1, callTimeoutMs: 2000, ...overrides.thread });
  }
  return {
    shell: { enabled: false },
    web: { enabled: false },
    pools: { cancelGraceMs: 300, restart: { maxRestarts: 3, windowMs: 60000, backoffBaseMs: 50, backoffMaxMs: 2000 } },
    customToolsets: toolsets,
    ...overrides.root,
  };
}
