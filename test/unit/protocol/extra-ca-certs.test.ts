import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Agent, buildConnector, request } from 'undici';
import { extraCaConnect, moveExtraCaCerts, restoreExtraCaCerts } from '../../../protocol/extra-ca-certs';

const TLS = path.join(__dirname, '..', '..', 'fixtures', 'tls');
const CA = path.join(TLS, 'ca.pem');

describe('moveExtraCaCerts', () => {
  test('moves NODE_EXTRA_CA_CERTS aside, leaving the given environment as it was', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: CA };
    expect(moveExtraCaCerts(env, [])).toEqual({ PATH: '/bin', MCPVISOR_EXTRA_CA_CERTS: CA });
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: CA });
  });

  test.each([
    ['unset', { PATH: '/bin' }, []],
    ['empty', { NODE_EXTRA_CA_CERTS: '' }, []],
    ['with --use-openssl-ca in NODE_OPTIONS', { NODE_EXTRA_CA_CERTS: CA, NODE_OPTIONS: '--max-old-space-size=512 --use-openssl-ca' }, []],
    ['with --use-openssl-ca in the worker flags', { NODE_EXTRA_CA_CERTS: CA }, ['--use-openssl-ca']],
  ])('leaves it alone when %s (Node trusts other roots there)', (_name, env, execArgv) => {
    expect(moveExtraCaCerts(env as NodeJS.ProcessEnv, execArgv as string[])).toBe(env);
  });
});

describe('in a worker', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer({ key: readFileSync(path.join(TLS, 'server.key')), cert: readFileSync(path.join(TLS, 'server.pem')) }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function get(connect: ReturnType<typeof extraCaConnect>): Promise<number | string> {
    const agent = new Agent({ connect });
    try {
      const res = await request(url, { dispatcher: agent });
      await res.body.dump();
      return res.statusCode;
    } catch (error) {
      return String((error as { code?: string }).code);
    } finally {
      await agent.close();
    }
  }

  test('without a moved variable: nothing to restore, undici keeps its own connector', () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin' };
    restoreExtraCaCerts(env);
    expect(env).toEqual({ PATH: '/bin' });
    expect(extraCaConnect(buildConnector)).toBeUndefined();
  });

  test('the test CA is not trusted by default (what the next test relies on)', async () => {
    expect(await get(undefined)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  });

  test('puts NODE_EXTRA_CA_CERTS back for what it spawns, and its HTTPS connections trust the file', async () => {
    const env: NodeJS.ProcessEnv = { PATH: '/bin', MCPVISOR_EXTRA_CA_CERTS: CA };
    restoreExtraCaCerts(env);
    expect(env).toEqual({ PATH: '/bin', NODE_EXTRA_CA_CERTS: CA });
    const connect = extraCaConnect(buildConnector);
    expect(connect).toBeInstanceOf(Function);
    expect(await get(connect)).toBe(200);
  });

  test('a file it cannot read: warned about once, as Node does at a start, and Node roots alone are trusted', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      let connect: ReturnType<typeof extraCaConnect>;
      jest.isolateModules(() => {
        const isolated = require('../../../protocol/extra-ca-certs') as typeof import('../../../protocol/extra-ca-certs');
        isolated.restoreExtraCaCerts({ MCPVISOR_EXTRA_CA_CERTS: '/nonexistent/ca.pem' });
        isolated.warmExtraCaCerts();
        connect = isolated.extraCaConnect(buildConnector);
      });
      expect(await get(connect!)).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
      expect(warn.mock.calls).toEqual([[expect.stringMatching(/^Ignoring extra certs from `\/nonexistent\/ca\.pem`, load failed: .*no such file/i)]]);
    } finally {
      warn.mockRestore();
    }
  });
});
