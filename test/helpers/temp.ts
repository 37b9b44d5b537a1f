import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const made: string[] = [];

// Registered when a test file first imports this module: after that file's own afterAll hooks
// (which stop the servers using the directories), everything made here is removed. The benches
// import the helpers outside jest, where there is no afterAll (and no tempDir call).
if (typeof afterAll === 'function') {
  afterAll(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
}

/** A fresh temporary directory, removed after the calling file's tests; callable inside a test. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
