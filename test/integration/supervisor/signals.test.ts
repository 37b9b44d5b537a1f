import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { errorCodeOf } from '../../../protocol/results';
import { fixtureConfig, writeConfig } from '../../helpers/config';
import { connectHttp, startHttp, textOf, untilCallRunning } from '../../helpers/mcp';
import { descendants, eventually, isAlive } from '../../helpers/processes';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean; _meta?: Record<string, unknown> };

const sleep = (client: Client, ms: number) => client.callTool({ name: 'sleep', arguments: { ms } }) as Promise<Result>;

/**
 * Signals other than SIGTERM and SIGINT. By their default action each ended the server at once,
 * with no log line, its calls unanswered, exit by signal (129, 140, 131).
 */
describe('signals', () => {
  it.each([
    // The terminal or ssh session the server ran in closed; nodemon's restart signal.
    { signal: 'SIGHUP' as const, drains: true },
    { signal: 'SIGUSR2' as const, drains: true },
    // Ctrl-\: quit now, running calls answered SHUTTING_DOWN.
    { signal: 'SIGQUIT' as const, drains: false },
  ])('$signal stops the server cleanly (drains: $drains), logs why, exits 0 and leaves no worker', async ({ signal, drains }) => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    const tree = descendants(server.server.child.pid!);
    const pending = sleep(client, 1_500);
    await untilCallRunning(server);
    server.server.child.kill(signal);
    const result = await pending;
    if (drains) expect(textOf(result)).toBe('slept 1500 ms');
    else expect(errorCodeOf(result)).toBe('SHUTTING_DOWN');
    expect(await server.server.exited).toBe(0);
    expect(server.server.stderr()).toContain(`"why":"${signal}","msg":"stop requested"`);
    expect(await eventually(() => tree.every((pid) => !isAlive(pid)))).toBe(true);
  }, 30_000);

  it('keeps serving through SIGPIPE', async () => {
    const server = await startHttp('mcpvisor', ['--config', writeConfig(fixtureConfig({ thread: false }))]);
    const { client } = await connectHttp(server.mcpUrl);
    server.server.child.kill('SIGPIPE');
    expect(textOf(await sleep(client, 10))).toBe('slept 10 ms');
    expect(await server.stop()).toBe(0);
  });
});
