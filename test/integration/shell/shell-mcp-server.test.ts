import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, linkSync, lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { errorCodeOf } from '../../../protocol/results';
import { connectStdio, textOf, type StdioConnection } from '../../helpers/mcp';
import { eventually } from '../../helpers/processes';
import { BLOCKED } from '../../fixtures/shell/blocked-commands';
import { call } from './helpers';

const TOOLS = ['deleteFile', 'exec', 'getSystemInfo', 'listDir', 'listProcesses', 'readFile', 'writeFile'];

describe.each([
  ['off', 'false'],
  ['on', 'true'],
])('shell-mcp-server with sandbox mode %s', (mode, SANDBOX_MODE) => {
  let ws: string;
  let server: StdioConnection;
  const sandboxed = SANDBOX_MODE === 'true';

  beforeAll(async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'shell-mcp-')));
    // A client's terminal and editor, as an MCP client started from a shell passes them on.
    server = await connectStdio('shell-mcp-server', [], { SANDBOX_MODE, SHELL_WORKSPACE: ws, COMMAND_TIMEOUT: '10000', DEBUG: 'true', TERM: 'xterm-256color', EDITOR: 'vi' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(ws, { recursive: true, force: true });
  });

  test('lists the seven tools of spec 002, each with an object input schema and an output schema', async () => {
    // Named as the command a client's config names (it said mcpvisor).
    expect(server.client.getServerVersion()?.name).toBe('shell-mcp-server');
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(TOOLS);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
  });

  test('exec runs the command in the workspace and returns text and structured output', async () => {
    const result = await call(server, 'exec', { command: 'pwd; echo oops >&2; exit 3' });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      stdout: `${ws}\n`,
      stderr: 'oops\n',
      exitCode: 3,
      signal: null,
      timedOut: false,
      isCanceled: false,
      stdoutTruncated: false,
      stderrTruncated: false,
      sandboxed,
    });
    expect(textOf(result)).toContain('exit code 3');
    expect(textOf(result)).toContain(`--- stdout ---\n${ws}`);
  });

  test('exec logs the command on stderr when DEBUG=true', async () => {
    await call(server, 'exec', { command: 'echo logged-command-marker' });
    // The log line travels worker → supervisor → stderr on its own path; wait for it.
    expect(await eventually(() => server.stderr().includes('logged-command-marker'), 5000)).toBe(true);
  });

  test('writeFile, readFile, listDir and deleteFile work on the workspace', async () => {
    const written = await call(server, 'writeFile', { path: 'dir/note.txt', content: 'hello' });
    expect(written.structuredContent).toEqual({ path: path.join(ws, 'dir/note.txt'), bytesWritten: 5, created: true });
    const read = await call(server, 'readFile', { path: 'dir/note.txt' });
    expect(textOf(read)).toBe('hello');
    expect(read.structuredContent).toMatchObject({ content: 'hello', sizeBytes: 5 });
    const listing = await call(server, 'listDir', { path: 'dir' });
    expect(listing.structuredContent).toMatchObject({ entries: [{ name: 'note.txt', type: 'file', sizeBytes: 5 }], total: 1, truncated: false });
    const deleted = await call(server, 'deleteFile', { path: 'dir/note.txt' });
    expect(deleted.structuredContent).toEqual({ path: path.join(ws, 'dir/note.txt'), deleted: true });
    expect(existsSync(path.join(ws, 'dir/note.txt'))).toBe(false);
  });

  test('listDir shows a name with a line break as one quoted row; its structuredContent has the name as it is', async () => {
    await call(server, 'writeFile', { path: 'names/new\nline.txt', content: 'x' });
    const listing = await call(server, 'listDir', { path: 'names' });
    expect(listing.structuredContent).toMatchObject({ entries: [{ name: 'new\nline.txt' }] });
    const rows = textOf(listing).split('\n');
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatch(/ "new\\nline\.txt"$/);
  });

  test('a file written by exec is read back by readFile', async () => {
    await call(server, 'exec', { command: 'printf "from exec" > made-by-exec.txt' });
    expect(readFileSync(path.join(ws, 'made-by-exec.txt'), 'utf8')).toBe('from exec');
    expect(textOf(await call(server, 'readFile', { path: 'made-by-exec.txt' }))).toBe('from exec');
  });

  test('file errors are results that name the path and carry a code', async () => {
    const missing = await call(server, 'readFile', { path: 'missing.txt' });
    expect(missing.isError).toBe(true);
    expect(errorCodeOf(missing)).toBe('NOT_FOUND');
    expect(textOf(missing)).toContain('missing.txt');
    const dir = await call(server, 'deleteFile', { path: '.' });
    expect(errorCodeOf(dir)).toBe('BAD_INPUT');
  });

  test('bad paths and commands get BAD_INPUT naming what was wrong, and the session lives on', async () => {
    // A file of control characters: as JSON twice it was a 12.6 MiB reply that ended the session.
    writeFileSync(path.join(ws, 'controls.bin'), Buffer.alloc(1024 * 1024, 1));
    const controls = await call(server, 'readFile', { path: 'controls.bin' });
    expect(errorCodeOf(controls)).toBe('BAD_INPUT');
    expect(textOf(controls)).toContain('reply budget');
    expect(textOf(await call(server, 'exec', { command: 'echo alive' }))).toContain('alive');
    const nul = await call(server, 'exec', { command: 'echo a\u0000b' });
    expect([errorCodeOf(nul), textOf(nul)]).toEqual(['BAD_INPUT', expect.stringContaining('NUL')]);
    const slash = await call(server, 'writeFile', { path: 'newdir/', content: 'x' });
    expect([errorCodeOf(slash), existsSync(path.join(ws, 'newdir'))]).toEqual(['BAD_INPUT', false]);
    await call(server, 'writeFile', { path: 'plain.txt', content: 'x' });
    const under = await call(server, 'writeFile', { path: 'plain.txt/sub.txt', content: 'x' });
    expect([errorCodeOf(under), textOf(under)]).toEqual(['BAD_INPUT', expect.stringContaining('not a directory')]);
  });

  test('a cut output says how much of the whole output is missing; its end is kept', async () => {
    const result = await call(server, 'exec', { command: 'head -c 3000000 /dev/zero | tr "\\0" a; echo THE-END' });
    const stdout = (result.structuredContent as { stdout: string }).stdout;
    const kept = stdout.replace(/\n\[…[^\]]*\]\n/, '').length;
    expect(stdout).toContain(`[… ${3_000_008 - kept} bytes cut to fit the reply …]`);
    expect(stdout.endsWith('THE-END\n')).toBe(true);
    expect(textOf(result)).toMatch(/\[… \d+ bytes cut to fit the reply …\]/);
    const textKept = textOf(result).split('--- stdout ---\n')[1].split('\n[stdout cut')[0].replace(/\n\[…[^\]]*\]\n/, '').length;
    // The text item drops the last line break of a stream.
    expect(textOf(result)).toContain(`[… ${3_000_008 - (textKept + 1)} bytes cut to fit the reply …]`);
  });

  test('a cut output that is not UTF-8 counts missing bytes of the output, not of its replacement characters', async () => {
    // Each \377 is shown as one U+FFFD (3 bytes of UTF-8) but was one byte of output.
    const result = await call(server, 'exec', { command: 'head -c 3000000 /dev/zero | tr "\\0" "\\377"; echo THE-END' });
    const outputBytesShown = (text: string) => {
      const kept = text.replace(/\n\[…[^\]]*\]\n/, '');
      return Buffer.byteLength(kept.replace(/\uFFFD/g, '')) + (kept.match(/\uFFFD/g) ?? []).length;
    };
    const marked = (text: string) => Number(/\[… (\d+) bytes cut to fit the reply …\]/.exec(text)?.[1]);
    const stdout = (result.structuredContent as { stdout: string }).stdout;
    expect(stdout.endsWith('\uFFFDTHE-END\n')).toBe(true);
    expect(marked(stdout)).toBe(3_000_008 - outputBytesShown(stdout));
    const shown = textOf(result).split('--- stdout ---\n')[1].split('\n[stdout cut')[0];
    // The text item drops the last line break of a stream.
    expect(marked(shown)).toBe(3_000_008 - (outputBytesShown(shown) + 1));
  });

  test('a command can open /dev/stdout and /dev/stderr by name, command after command', async () => {
    // More commands than one batch of pipes (32 FIFOs, two per command), some at once.
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => call(server, 'exec', { command: `echo out${i} >/dev/stdout; echo err${i} >/dev/stderr; echo tee${i} | tee /dev/stderr` })));
    results.forEach((result, i) => {
      expect(result.structuredContent).toMatchObject({ exitCode: 0, stdout: `out${i}\ntee${i}\n`, stderr: `err${i}\ntee${i}\n` });
    });
  });

  test('a command killed by a signal says which, in both modes', async () => {
    const result = await call(server, 'exec', { command: 'sleep 5 & kill -TERM $!; wait $!' });
    expect(textOf(result)).toContain('exit code 143 (128 + 15: usually a process killed by SIGTERM)');
  });

  test('getSystemInfo reports the machine and the sandbox state', async () => {
    const result = await call(server, 'getSystemInfo');
    expect(result.structuredContent).toMatchObject({
      platform: 'linux',
      cpuCores: os.cpus().length,
      memoryTotalBytes: os.totalmem(),
      sandbox: { enabled: sandboxed, available: sandboxed, tool: 'bubblewrap' },
      commandTimeoutMs: 10_000,
    });
    expect(textOf(result)).toContain(`sandbox: ${mode}`);
    // The defaults: 1 GiB files, half the machine's memory (at most 8 GiB) per process, a 512 MiB /tmp.
    const memory = Math.min(Math.floor(os.totalmem() / 2), 8 * 1024 ** 3);
    if (sandboxed) {
      // The process rlimit binds every user but root.
      const processes = process.getuid?.() === 0 ? null : 512;
      expect((result.structuredContent!.sandbox as { limits: unknown }).limits).toEqual({ maxFileBytes: 1024 ** 3, maxMemoryBytes: memory, maxProcesses: processes, tmpBytes: 512 * 1024 ** 2, network: false, home: { path: '/home/sandbox', kept: true } });
      expect(textOf(result)).toContain(`limits: a command is killed after 10 s; in the sandbox, files up to 1.0 GiB, ${(memory / 1024 ** 3).toFixed(1)} GiB of memory per process, /tmp of 512 MiB, no network`);
    } else {
      expect(result.structuredContent!.sandbox).not.toHaveProperty('limits');
      expect(textOf(result)).toMatch(/limits: a command is killed after 10 s$/m);
    }
    // df's rule (used of used + available), which df rounds up to a whole percent.
    const df = Number(execFileSync('df', ['--output=pcent', ws], { encoding: 'utf8' }).split('\n')[1].trim().replace('%', ''));
    const used = (result.structuredContent!.disk as { usedPercent: number }).usedPercent;
    expect(used).toBeLessThanOrEqual(df);
    expect(used).toBeGreaterThanOrEqual(df - 1);
  });

  test('writeFile writes through a symlink to its target, as the sandbox does and a shell\'s > does', async () => {
    writeFileSync(path.join(ws, 'AGENTS.md'), 'v1');
    symlinkSync('AGENTS.md', path.join(ws, 'CLAUDE.md'));
    const result = await call(server, 'writeFile', { path: 'CLAUDE.md', content: 'v2' });
    expect(result.isError).toBeFalsy();
    expect(lstatSync(path.join(ws, 'CLAUDE.md')).isSymbolicLink()).toBe(true);
    expect(readFileSync(path.join(ws, 'AGENTS.md'), 'utf8')).toBe('v2');
  });

  test('writeFile refuses a FIFO and a Unix socket instead of replacing them with a regular file', async () => {
    execFileSync('mkfifo', [path.join(ws, 'jobs.fifo')]);
    const socketPath = path.join(ws, 'app.sock');
    const listener = createServer().listen(socketPath);
    await once(listener, 'listening');
    try {
      for (const [name, kind] of [['jobs.fifo', 'a FIFO'], ['app.sock', 'a Unix socket']]) {
        const result = await call(server, 'writeFile', { path: name, content: 'x' });
        expect([result.isError, errorCodeOf(result)]).toEqual([true, 'BAD_INPUT']);
        expect(textOf(result)).toContain(`${name} is ${kind}`);
      }
      expect(lstatSync(path.join(ws, 'jobs.fifo')).isFIFO()).toBe(true);
      expect(lstatSync(socketPath).isSocket()).toBe(true);
    } finally {
      listener.close();
    }
  });

  test('writeFile writes a file with other hard links in place, so every name of it sees the new content', async () => {
    writeFileSync(path.join(ws, 'settings.conf'), 'v1');
    // Set-group-ID too, which new content never keeps (the kernel keeps it on a write as root).
    chmodSync(path.join(ws, 'settings.conf'), 0o2640);
    linkSync(path.join(ws, 'settings.conf'), path.join(ws, 'settings.link'));
    const inode = statSync(path.join(ws, 'settings.conf')).ino;
    const result = await call(server, 'writeFile', { path: 'settings.link', content: 'v2, longer' });
    expect(result.structuredContent).toEqual({ path: path.join(ws, 'settings.link'), bytesWritten: 10, created: false, inPlace: true });
    expect(textOf(result)).toContain('in place');
    expect(readFileSync(path.join(ws, 'settings.conf'), 'utf8')).toBe('v2, longer');
    const after = statSync(path.join(ws, 'settings.link'));
    expect([after.ino, after.nlink, after.mode & 0o7777]).toEqual([inode, 2, 0o640]);
    // Shorter content leaves nothing of the longer one behind.
    await call(server, 'writeFile', { path: 'settings.conf', content: 'v3' });
    expect(readFileSync(path.join(ws, 'settings.link'), 'utf8')).toBe('v3');
  });

  test('readFile refuses text that is not UTF-8 instead of handing back U+FFFD a rewrite would keep; writeFile refuses a lone surrogate', async () => {
    writeFileSync(path.join(ws, 'legacy.ini'), Buffer.from('name=caf\xe9\nport=80\n', 'latin1'));
    const read = await call(server, 'readFile', { path: 'legacy.ini' });
    expect([read.isError, errorCodeOf(read)]).toEqual([true, 'BAD_INPUT']);
    expect(textOf(read)).toContain('not valid UTF-8');
    const write = await call(server, 'writeFile', { path: 'half.txt', content: 'x\ud800y' });
    expect([write.isError, errorCodeOf(write)]).toEqual([true, 'BAD_INPUT']);
    expect(existsSync(path.join(ws, 'half.txt'))).toBe(false);
  });

  test('a command has no terminal and no editor: git commit without -m fails at once instead of waiting in vim', async () => {
    const result = await call(server, 'exec', { command: 'echo "TERM=$TERM EDITOR=${EDITOR-unset} PAGER=$PAGER"; git init -q repo && cd repo && echo a > a && git add a && git -c user.name=t -c user.email=t@t commit -q; echo "commit=$?"' });
    expect(result.structuredContent).toMatchObject({ timedOut: false });
    expect(result.structuredContent!.stdout).toMatch(/^TERM=dumb EDITOR=unset PAGER=cat\n[\s\S]*commit=[1-9]/);
  });

  test('listProcesses filters by name, case-insensitively, and finds the server itself', async () => {
    const result = await call(server, 'listProcesses', { filter: 'NODE' });
    const rows = result.structuredContent!.processes as Array<{ pid: number; name: string }>;
    expect(rows.map((row) => row.pid)).toContain(server.pid());
    expect(rows.every((row) => row.name.toLowerCase().includes('node'))).toBe(true);
  });

  test(`listProcesses shows a host process's arguments ${sandboxed ? 'not at all (the sandbox hides them)' : 'whole'}`, async () => {
    // As an MCP client starts an API server next to this one, its token on the command line.
    // Its own process group: dash forks the sleep, which must not outlive the test.
    const host = spawn('/bin/sh', ['-c', 'sleep 4701', 'openapi-mcp-server', '--headers', 'Authorization:Bearer token-4701'], { stdio: 'ignore', detached: true });
    try {
      const result = await call(server, 'listProcesses', { filter: 'sh' });
      const row = (result.structuredContent!.processes as Array<{ pid: number; command: string }>).find((entry) => entry.pid === host.pid);
      expect(row?.command).toBe(sandboxed ? '/bin/sh' : '/bin/sh -c sleep 4701 openapi-mcp-server --headers Authorization:Bearer token-4701');
      expect(result.structuredContent!.argumentsHidden).toBe(sandboxed);
      expect(JSON.stringify(result).includes('token-4701')).toBe(!sandboxed);
    } finally {
      process.kill(-host.pid!, 'SIGKILL');
    }
  });

  test.each([
    ['rm -rf /', 'touch ran.txt; rm -fr /'],
    ['mkfs', 'touch ran.txt && sudo mkfs.ext4 /dev/sda1'],
    ['dd if=', 'touch ran.txt; dd of=/dev/sda if=/dev/zero'],
    ['> /dev/', "sh -c 'touch ran.txt; echo x >/dev/sda'"],
  ])('refuses a command matching %p before anything runs', async (pattern, command) => {
    const result = await call(server, 'exec', { command });
    expect(result.isError).toBe(true);
    expect(errorCodeOf(result)).toBe('BLOCKED');
    expect(textOf(result)).toContain(`blocked pattern "${pattern}"`);
    expect(existsSync(path.join(ws, 'ran.txt'))).toBe(false);
  });

  test('refuses every blocked variant of the table through the binary, with its pattern named', async () => {
    for (const { given, want } of BLOCKED) {
      const result = await call(server, 'exec', { command: given });
      expect({ given, code: errorCodeOf(result), named: textOf(result).includes(`blocked pattern "${want}"`) }).toEqual({ given, code: 'BLOCKED', named: true });
    }
  });
});
