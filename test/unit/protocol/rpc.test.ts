import { MessageChannel } from 'node:worker_threads';
import { messagePortChannel } from '../../../protocol/channel';
import { McpvisorError } from '../../../protocol/errors';
import type { SupervisorMessage, WorkerMessage } from '../../../protocol/messages';
import { RpcClient } from '../../../protocol/rpc';

/** A worker end that answers by a script, so each RPC rule can be driven exactly. */
function setup() {
  const { port1, port2 } = new MessageChannel();
  const received: SupervisorMessage[] = [];
  const worker = messagePortChannel<WorkerMessage, SupervisorMessage>(port2);
  const waiters: Array<() => void> = [];
  worker.onMessage((message) => {
    received.push(message);
    waiters.splice(0).forEach((wake) => wake());
  });
  const other: WorkerMessage[] = [];
  const rpc = new RpcClient(messagePortChannel<SupervisorMessage, WorkerMessage>(port1), (message) => other.push(message));
  const next = (type: SupervisorMessage['type']) =>
    new Promise<SupervisorMessage>((resolve) => {
      const look = () => {
        const found = received.find((message) => message.type === type);
        if (found) {
          received.splice(received.indexOf(found), 1);
          resolve(found);
        } else waiters.push(look);
      };
      look();
    });
  return { rpc, worker, next, other, close: () => { port1.close(); port2.close(); } };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return (error as McpvisorError).code;
  }
}

describe('RpcClient', () => {
  it('matches answers to calls by id, whatever their order', async () => {
    const { rpc, worker, next, close } = setup();
    const a = rpc.call({ tool: 'a', arguments: {} }, { deadlineMs: 5000 });
    const b = rpc.call({ tool: 'b', arguments: {} }, { deadlineMs: 5000 });
    const first = (await next('call')) as Extract<SupervisorMessage, { type: 'call' }>;
    const second = (await next('call')) as Extract<SupervisorMessage, { type: 'call' }>;
    expect(first.id).not.toBe(second.id);
    worker.send({ type: 'result', id: second.id, result: { content: [{ type: 'text', text: 'B' }] } });
    worker.send({ type: 'error', id: first.id, error: { code: 'UPSTREAM_ERROR', message: 'bad' } });
    await expect(b).resolves.toEqual({ content: [{ type: 'text', text: 'B' }] });
    expect(await codeOf(a)).toBe('UPSTREAM_ERROR');
    expect(rpc.inFlight).toBe(0);
    close();
  });

  it('times out at the deadline, sends a cancel, and holds the slot until the worker confirms', async () => {
    const { rpc, worker, next, close } = setup();
    const call = rpc.call({ tool: 'slow', arguments: {} }, { deadlineMs: 30, cancelGraceMs: 5000 });
    const sent = (await next('call')) as Extract<SupervisorMessage, { type: 'call' }>;
    expect(sent.deadlineMs).toBe(30);
    expect(await codeOf(call)).toBe('TIMEOUT');
    expect(await next('cancel')).toEqual({ type: 'cancel', id: sent.id, reason: 'timeout' });
    expect(rpc.inFlight).toBe(1);
    worker.send({ type: 'error', id: sent.id, error: { code: 'CANCELLED', message: 'stopped' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(rpc.inFlight).toBe(0);
    close();
  });

  it('reports a worker that ignores a cancel past the grace', async () => {
    const { rpc, next, close } = setup();
    const unresponsive = new Promise<string>((resolve) => {
      void rpc.call({ tool: 'stuck', arguments: {} }, { deadlineMs: 10, cancelGraceMs: 20, onUnresponsive: () => resolve('unresponsive') }).catch(() => undefined);
    });
    await next('call');
    expect(await unresponsive).toBe('unresponsive');
    close();
  });

  it('reads a confirmation that came while its event loop was blocked before judging the worker unresponsive', async () => {
    const { rpc, worker, next, close } = setup();
    let unresponsive = false;
    const controller = new AbortController();
    const outcome = codeOf(rpc.call({ tool: 'x', arguments: {} }, { deadlineMs: 5000, cancelGraceMs: 20, signal: controller.signal, onUnresponsive: () => (unresponsive = true) }));
    const sent = (await next('call')) as Extract<SupervisorMessage, { type: 'call' }>;
    controller.abort();
    await next('cancel');
    worker.send({ type: 'error', id: sent.id, error: { code: 'CANCELLED', message: 'the call was cancelled' } });
    // The supervisor blocked past the grace (a long GC pause, a heap snapshot): when the loop
    // runs again the grace timer is due and the worker's confirmation waits to be read.
    const until = Date.now() + 80;
    while (Date.now() < until) {
      // blocked
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(unresponsive).toBe(false);
    expect(await outcome).toBe('CANCELLED');
    close();
  });

  it('cancels on abort with CANCELLED and tells the worker', async () => {
    const { rpc, next, close } = setup();
    const controller = new AbortController();
    const call = rpc.call({ tool: 'x', arguments: {} }, { deadlineMs: 5000, signal: controller.signal });
    const sent = (await next('call')) as Extract<SupervisorMessage, { type: 'call' }>;
    controller.abort();
    expect(await codeOf(call)).toBe('CANCELLED');
    expect(await next('cancel')).toEqual({ type: 'cancel', id: sent.id, reason: 'cancelled' });
    close();
  });

  it('fails every pending call with WORKER_CRASHED when the channel closes, and later calls at once', async () => {
    const { rpc, next, close } = setup();
    const calls = [1, 2, 3].map(() => rpc.call({ tool: 'x', arguments: {} }, { deadlineMs: 5000 }));
    await next('call');
    rpc.close('worker exited with code 1');
    expect(await Promise.all(calls.map(codeOf))).toEqual(['WORKER_CRASHED', 'WORKER_CRASHED', 'WORKER_CRASHED']);
    expect(await codeOf(rpc.call({ tool: 'x', arguments: {} }, { deadlineMs: 5000 }))).toBe('WORKER_CRASHED');
    close();
  });

  it('passes ready, fatal and log messages to the owner', async () => {
    const { worker, other, close } = setup();
    worker.send({ type: 'log', level: 'info', msg: 'hello' });
    worker.send({ type: 'ready', tools: [] });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(other.map((message) => message.type)).toEqual(['log', 'ready']);
    close();
  });
});

describe('McpvisorError', () => {
  it('round-trips through its wire form with code and data', () => {
    const error = new McpvisorError('BUSY', 'full', { data: { queued: 3 } });
    expect(McpvisorError.fromInfo(error.toInfo())).toMatchObject({ code: 'BUSY', message: 'full', data: { queued: 3 } });
  });
});
