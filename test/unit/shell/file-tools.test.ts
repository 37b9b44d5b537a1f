import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, chmodSync, existsSync, realpathSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { deleteFile, readTextFile, resolvePath, writeTextFile, type FileToolOptions } from '../../../workers/shell/file-tools';
import { listDirectory } from '../../../workers/shell/list-directory';

let root: string;
let ws: string;
let outside: string;
let confined: FileToolOptions;
let open: FileToolOptions;

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-files-')));
  ws = path.join(root, 'ws');
  outside = path.join(root, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  symlinkSync(outside, path.join(ws, 'out-dir'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(ws, 'out-file'));
  symlinkSync(path.join(outside, 'not-yet'), path.join(ws, 'dangling'));
  mkdirSync(path.join(ws, 'sub'));
  symlinkSync(path.join(ws, 'sub'), path.join(ws, 'in-dir'));
  confined = { workspace: ws, confined: true, maxReadBytes: 1000, maxListEntries: 100 };
  open = { ...confined, confined: false };
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('confinement in sandbox mode', () => {
  const escapes: Array<[string, (options: FileToolOptions) => Promise<unknown>]> = [
    ['readFile through a symlinked file', (o) => readTextFile('out-file', o)],
    ['readFile through a symlinked directory', (o) => readTextFile('out-dir/secret.txt', o)],
    ['readFile of an absolute path outside', (o) => readTextFile(path.join(outside, 'secret.txt'), o)],
    ['readFile of a .. path', (o) => readTextFile('../outside/secret.txt', o)],
    ['writeFile through a symlinked file', (o) => writeTextFile('out-file', 'x', o)],
    ['writeFile of a new file in a symlinked directory', (o) => writeTextFile('out-dir/new.txt', 'x', o)],
    ['writeFile of a new file in new directories under a symlinked directory', (o) => writeTextFile('out-dir/a/b/new.txt', 'x', o)],
    ['writeFile through a dangling symlink', (o) => writeTextFile('dangling', 'x', o)],
    ['writeFile of a .. path', (o) => writeTextFile('sub/../../outside/new.txt', 'x', o)],
    ['deleteFile in a symlinked directory', (o) => deleteFile('out-dir/secret.txt', o)],
    ['deleteFile of a .. path', (o) => deleteFile('../outside/secret.txt', o)],
    ['listDir of a symlinked directory', (o) => listDirectory('out-dir', o)],
    ['listDir of ..', (o) => listDirectory('..', o)],
  ];

  test.each(escapes)('refuses %s with BLOCKED and touches nothing outside', async (_name, act) => {
    await expect(act(confined)).rejects.toMatchObject({ code: 'BLOCKED' });
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    expect(readdirSync(outside).sort()).toEqual(['secret.txt']);
  });

  test('allows symlinks and .. that stay inside the workspace', async () => {
    await writeTextFile('in-dir/a.txt', 'inside', confined);
    expect((await readTextFile('sub/../in-dir/a.txt', confined)).content).toBe('inside');
    expect(await resolvePath('.', confined)).toBe(ws);
  });

  test('deleteFile removes a symlink that points outside, not its target', async () => {
    await deleteFile('out-file', confined);
    expect(existsSync(path.join(ws, 'out-file'))).toBe(false);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  test('does not confine when sandbox mode is off', async () => {
    expect((await readTextFile('out-file', open)).content).toBe('secret');
    expect((await readTextFile('../outside/secret.txt', open)).content).toBe('secret');
  });
});

describe('readFile', () => {
  test('returns the text with its size and modification time', async () => {
    writeFileSync(path.join(ws, 'a.txt'), 'héllo\n');
    const read = await readTextFile('a.txt', confined);
    expect(read).toMatchObject({ path: path.join(ws, 'a.txt'), content: 'héllo\n', sizeBytes: 7 });
    expect(new Date(read.modified).getTime()).toBeGreaterThan(0);
  });

  test('refuses a binary file, an oversized file, a directory and a missing file with codes that name the path', async () => {
    writeFileSync(path.join(ws, 'bin'), Buffer.from([0x7f, 0x45, 0x00, 0x01]));
    writeFileSync(path.join(ws, 'big'), 'x'.repeat(1001));
    await expect(readTextFile('bin', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringMatching(/^bin looks binary/) });
    await expect(readTextFile('big', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('1001 bytes, over the 1000-byte limit') });
    await expect(readTextFile('sub', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'sub is a directory; use listDir' });
    await expect(readTextFile('nope.txt', confined)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'nope.txt: no such file or directory' });
  });

  test('reads a file whose size on disk is not its content (procfs) to its end, and refuses one past the limit', async () => {
    const roomy = { ...open, maxReadBytes: 1024 * 1024 };
    expect(statSync('/proc/version').size).toBe(0);
    expect(await readTextFile('/proc/version', roomy)).toMatchObject({ content: readFileSync('/proc/version', 'utf8'), sizeBytes: readFileSync('/proc/version').length });
    const status = await readTextFile('/proc/self/status', roomy);
    expect(status.content).toMatch(/^Name:[\s\S]*\nVmRSS:[\s\S]*\n$/);
    expect(status.sizeBytes).toBe(Buffer.byteLength(status.content));
    await expect(readTextFile('/proc/self/status', { ...open, maxReadBytes: 100 })).rejects.toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining('more than the 100-byte limit of readFile') });
  });
});

describe('writeFile', () => {
  test('creates parent directories and reports a new file', async () => {
    const written = await writeTextFile('deep/er/x.txt', 'data', confined);
    expect(written).toEqual({ path: path.join(ws, 'deep/er/x.txt'), bytesWritten: 4, created: true });
    expect(readFileSync(path.join(ws, 'deep/er/x.txt'), 'utf8')).toBe('data');
  });

  test('replaces an existing file through a rename, keeping its mode and leaving no temporary file', async () => {
    const file = path.join(ws, 'run.sh');
    writeFileSync(file, 'old');
    chmodSync(file, 0o750);
    const before = statSync(file).ino;
    const written = await writeTextFile('run.sh', 'new content', confined);
    expect(written.created).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('new content');
    expect(statSync(file).mode & 0o777).toBe(0o750);
    expect(statSync(file).ino).not.toBe(before);
    expect(readdirSync(ws).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  test('refuses to write over a directory', async () => {
    await expect(writeTextFile('sub', 'x', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'sub is a directory' });
  });
});

describe('deleteFile', () => {
  test('deletes a file and refuses a directory or a missing path', async () => {
    writeFileSync(path.join(ws, 'gone.txt'), 'x');
    expect(await deleteFile('gone.txt', confined)).toEqual({ path: path.join(ws, 'gone.txt'), deleted: true });
    expect(existsSync(path.join(ws, 'gone.txt'))).toBe(false);
    await expect(deleteFile('sub', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'sub is a directory; deleteFile removes files only' });
    await expect(deleteFile('gone.txt', confined)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  test.each([['sandbox mode', true], ['unconfined', false]])('takes a trailing slash as naming a directory, in %s: the file stays', async (_mode, isConfined) => {
    writeFileSync(path.join(ws, 'kept.txt'), 'x');
    const options = isConfined ? confined : open;
    await expect(deleteFile('kept.txt/', options)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'kept.txt/ ends with a slash, so it names a directory; deleteFile removes files only' });
    await expect(readTextFile('kept.txt/', options)).rejects.toMatchObject({ code: 'BAD_INPUT' });
    expect(readFileSync(path.join(ws, 'kept.txt'), 'utf8')).toBe('x');
  });
});

describe("the server's own code and config in the workspace (sandbox mode)", () => {
  const refusal = (given: string, protectedPath: string) => ({
    code: 'BAD_INPUT',
    message: `${given}: ${protectedPath} holds the server's own code; it is read-only in sandbox mode`,
    data: { path: given, protected: protectedPath },
  });
  let code: string;
  let guarded: FileToolOptions;
  beforeEach(() => {
    code = path.join(ws, 'node_modules');
    mkdirSync(path.join(code, 'mcpvisor'), { recursive: true });
    writeFileSync(path.join(code, 'mcpvisor', 'index.js'), 'original');
    symlinkSync(path.join(code, 'mcpvisor'), path.join(ws, 'code-link'));
    guarded = { ...confined, readOnly: [{ path: code, reason: "holds the server's own code" }] };
  });

  test('writeFile and deleteFile refuse a file at or under a protected path, also through a symlink, and create no directory there', async () => {
    await expect(writeTextFile('node_modules/mcpvisor/index.js', 'evil', guarded)).rejects.toMatchObject(refusal('node_modules/mcpvisor/index.js', code));
    await expect(writeTextFile('node_modules/new/dir/file.js', 'evil', guarded)).rejects.toMatchObject(refusal('node_modules/new/dir/file.js', code));
    await expect(writeTextFile(path.join(ws, 'node_modules'), 'evil', guarded)).rejects.toMatchObject(refusal(path.join(ws, 'node_modules'), code));
    await expect(writeTextFile('code-link/index.js', 'evil', guarded)).rejects.toMatchObject(refusal('code-link/index.js', code));
    await expect(deleteFile('node_modules/mcpvisor/index.js', guarded)).rejects.toMatchObject(refusal('node_modules/mcpvisor/index.js', code));
    await expect(deleteFile('code-link/index.js', guarded)).rejects.toMatchObject(refusal('code-link/index.js', code));
    expect(readFileSync(path.join(code, 'mcpvisor', 'index.js'), 'utf8')).toBe('original');
    expect(existsSync(path.join(code, 'new'))).toBe(false);
  });

  test('reads stay allowed, and so do writes beside the protected path and deleting a symlink that points into it', async () => {
    expect((await readTextFile('node_modules/mcpvisor/index.js', guarded)).content).toBe('original');
    expect((await listDirectory('node_modules', guarded)).entries.map((entry) => entry.name)).toEqual(['mcpvisor']);
    await writeTextFile('node_modules2/x.js', 'mine', guarded);
    expect(readFileSync(path.join(ws, 'node_modules2', 'x.js'), 'utf8')).toBe('mine');
    await deleteFile('code-link', guarded);
    expect(existsSync(path.join(code, 'mcpvisor', 'index.js'))).toBe(true);
  });

  test('unconfined, nothing is refused: the tools act with the user\'s rights', async () => {
    await writeTextFile('node_modules/mcpvisor/index.js', 'changed', { ...guarded, confined: false });
    expect(readFileSync(path.join(code, 'mcpvisor', 'index.js'), 'utf8')).toBe('changed');
  });
});

describe('listDir', () => {
  test('lists entries sorted by name with type, size and modification time', async () => {
    writeFileSync(path.join(ws, 'b.txt'), '12345');
    writeFileSync(path.join(ws, 'A.txt'), '');
    const listing = await listDirectory('.', confined);
    expect(listing.entries.map((entry) => entry.name)).toEqual(['A.txt', 'b.txt', 'dangling', 'in-dir', 'out-dir', 'out-file', 'sub']);
    expect(listing.entries.find((entry) => entry.name === 'b.txt')).toMatchObject({ type: 'file', sizeBytes: 5 });
    expect(listing.entries.find((entry) => entry.name === 'sub')).toMatchObject({ type: 'directory' });
    expect(listing.entries.find((entry) => entry.name === 'out-dir')).toMatchObject({ type: 'symlink' });
    expect(listing).toMatchObject({ total: 7, truncated: false });
  });

  test('caps the number of entries and says so', async () => {
    const listing = await listDirectory('.', { ...confined, maxListEntries: 2 });
    expect(listing.entries).toHaveLength(2);
    expect(listing).toMatchObject({ total: 5, truncated: true });
  });

  test('refuses a file and a missing directory', async () => {
    writeFileSync(path.join(ws, 'f'), '');
    await expect(listDirectory('f', confined)).rejects.toMatchObject({ code: 'BAD_INPUT', message: 'f is not a directory' });
    await expect(listDirectory('none', confined)).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'none: no such file or directory' });
  });
});

describe('a directory swapped for a symlink while the tools run (sandbox mode)', () => {
  test('never reads, writes or deletes outside the workspace', async () => {
    writeFileSync(path.join(outside, 'victim.txt'), 'keep me');
    mkdirSync(path.join(ws, 'd'));
    writeFileSync(path.join(ws, 'd', 'secret.txt'), 'inside');
    writeFileSync(path.join(ws, 'd', 'victim.txt'), 'inside victim');
    // Another process (a sandboxed command would do the same) swaps ws/d between the directory
    // and a symlink to `outside`, for 3 s.
    const swapper = spawn(process.execPath, [
      '-e',
      `const fs = require('fs'); const d = process.argv[1], real = d + '.real', out = process.argv[2];
       fs.renameSync(d, real);
       for (const end = Date.now() + 3000; Date.now() < end; ) {
         try { fs.symlinkSync(out, d); fs.unlinkSync(d); fs.renameSync(real, d); fs.renameSync(d, real); } catch {}
       }
       try { fs.unlinkSync(d); } catch {}
       try { fs.renameSync(real, d); } catch {}`,
      path.join(ws, 'd'),
      outside,
    ]);
    const done = new Promise((resolve) => swapper.on('exit', resolve));
    let stop = false;
    void done.then(() => (stop = true));
    const read: string[] = [];
    for (let i = 0; !stop && i < 100_000; i++) {
      await writeTextFile(`d/new-${i}.txt`, 'model content', confined).catch(() => undefined);
      await readTextFile('d/secret.txt', confined).then((r) => read.push(r.content), () => undefined);
      await deleteFile('d/victim.txt', confined).catch(() => undefined);
    }
    await done;
    expect(readdirSync(outside).sort()).toEqual(['secret.txt', 'victim.txt']);
    expect(readFileSync(path.join(outside, 'victim.txt'), 'utf8')).toBe('keep me');
    expect(read.filter((content) => content !== 'inside')).toEqual([]);
  }, 20_000);
});

describe('special files and modes', () => {
  test('readFile refuses a FIFO at once instead of waiting for a writer', async () => {
    expect(spawnSync('mkfifo', [path.join(ws, 'pipe')]).status).toBe(0);
    const outcome = await Promise.race([
      readTextFile('pipe', confined).then(() => 'read', (error: { code?: string }) => error.code),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 5000).unref()),
    ]);
    expect(outcome).toBe('BAD_INPUT');
  });

  test.each([
    ['sandbox', true],
    ['unconfined', false],
  ])('readFile refuses a Unix socket as no regular file (%s mode), not as an internal error', async (_mode, isConfined) => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path.join(ws, 'sock'), resolve));
    try {
      const error = await readTextFile('sock', isConfined ? confined : open).then(() => undefined, (caught: { code?: string; message?: string }) => caught);
      expect(error?.code).toBe('BAD_INPUT');
      expect(error?.message).toMatch(/^sock: .*socket.*readFile reads regular files/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test.each([
    ['sandbox', true],
    ['unconfined', false],
  ])('readFile of a file another process holds a write lease on says it is busy (%s mode), at once', async (_mode, isConfined) => {
    writeFileSync(path.join(ws, 'leased.txt'), 'v1');
    // F_SETLEASE (1024) with F_WRLCK (1): an open by anyone else waits up to lease-break-time
    // (45 s) for the holder, or fails with EAGAIN when non-blocking, as readFile opens.
    const holder = spawn('perl', ['-e', 'open F, "+<", $ARGV[0] or die; fcntl(F, 1024, 1) or die "lease: $!"; $| = 1; print "leased\n"; sleep 30', path.join(ws, 'leased.txt')], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const said = await new Promise((resolve) => {
        holder.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString()));
        holder.once('exit', () => resolve('exited'));
      });
      expect(said).toBe('leased\n');
      const error = await readTextFile('leased.txt', isConfined ? confined : open).then(() => undefined, (caught: { code?: string; message?: string }) => caught);
      expect(error).toMatchObject({ code: 'BAD_INPUT', message: 'leased.txt is busy: another process holds a lease on it (fcntl F_SETLEASE), which the kernel has asked it to give up; try again in a moment, or read it with exec' });
    } finally {
      holder.kill('SIGKILL');
    }
  });

  test('writeFile keeps a file mode but drops set-user-ID and set-group-ID', async () => {
    writeFileSync(path.join(ws, 'tool'), 'old');
    chmodSync(path.join(ws, 'tool'), 0o6755);
    await writeTextFile('tool', 'new', confined);
    expect(statSync(path.join(ws, 'tool')).mode & 0o7777).toBe(0o755);
  });
});

test.each([
  ['a 300-character file name', 'n'.repeat(300)],
  ['a path over 4096 bytes', 'd/'.repeat(2100) + 'f.txt'],
])('%s is BAD_INPUT with a short message that cuts the path, in both modes', async (_what, name) => {
  for (const options of [open, confined]) {
    for (const attempt of [() => readTextFile(name, options), () => writeTextFile(name, 'x', options)]) {
      const error = await attempt().then(() => undefined, (e: { code: string; message: string; data?: { path?: string } }) => e);
      expect(error).toMatchObject({ code: 'BAD_INPUT', message: expect.stringContaining(': file name or path too long') });
      expect(error!.message.length).toBeLessThan(300);
      expect(error!.data?.path?.length).toBeLessThan(300);
    }
  }
});

test('a file where a directory should be is a plain error, not an escape', async () => {
  writeFileSync(path.join(ws, 'plain'), 'x');
  await expect(writeTextFile('plain/x.txt', 'y', confined)).rejects.toMatchObject({ code: 'BAD_INPUT' });
  await expect(readTextFile('plain/x.txt', confined)).rejects.toMatchObject({ code: 'BAD_INPUT' });
});
