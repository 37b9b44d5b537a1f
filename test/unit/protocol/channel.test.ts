import { fork, type ChildProcess } from 'node:child_process';
import { childProcessChannel, type Channel } from '../../../protocol/channel';
import { fixture } from '../../helpers/processes';

type Echo = { n: number; payloadSize: number };

describe('process channels', () => {
  let child: ChildProcess;
  let channel: Channel<{ n: number }, Echo>;
  /** Every IPC payload that reached this side, as it came (a message or an array of them). */
  let payloads: unknown[];
  let echoes: Echo[];

  beforeEach(() => {
    child = fork(fixture('echo-channel'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    payloads = [];
    echoes = [];
    child.on('message', (payload) => payloads.push(payload));
    channel = childProcessChannel(child);
    channel.onMessage((echo) => echoes.push(echo));
  });

  afterEach(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.disconnect();
      await exited;
    }
  });

  const echoed = async (count: number) => {
    for (let i = 0; i < 500 && echoes.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return echoes;
  };

  it('sends the messages of one turn of the event loop as one payload, and the answers come back the same way, in order', async () => {
    for (let n = 1; n <= 3; n++) channel.send({ n });
    expect(await echoed(3)).toEqual([1, 2, 3].map((n) => ({ n, payloadSize: 3 })));
    expect(payloads).toHaveLength(1);
    expect(Array.isArray(payloads[0])).toBe(true);
  });

  it('sends a message alone as itself, not as an array', async () => {
    channel.send({ n: 7 });
    expect(await echoed(1)).toEqual([{ n: 7, payloadSize: 1 }]);
    expect(payloads).toEqual([{ n: 7, payloadSize: 1 }]);
  });

  it('sends what is queued at once on flush', async () => {
    channel.send({ n: 1 });
    channel.flush();
    channel.send({ n: 2 });
    expect(await echoed(2)).toEqual([
      { n: 1, payloadSize: 1 },
      { n: 2, payloadSize: 1 },
    ]);
  });

  it('sends nothing once the child has gone, without throwing', async () => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(() => {
      channel.send({ n: 1 });
      channel.flush();
    }).not.toThrow();
    expect(echoes).toEqual([]);
  });
});
