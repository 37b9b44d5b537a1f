import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../../helpers/processes';

const LAZY = path.join(ROOT, 'dist', 'workers', 'openapi', 'lazy.js');
const BUNDLE = path.join(ROOT, 'dist', 'workers', 'openapi', 'deps.bundle.js');

describe('the api worker build', () => {
  it('takes undici, ajv and swagger-client from its one-file bundle, memoises the path-template parse the bundled builder calls, and builds requests', () => {
    // A fresh Node, as a worker starts: what it loads is what require.cache then holds.
    const code = `
      const lazy = require(${JSON.stringify(LAZY)});
      const build = lazy.swaggerBuildRequest();
      const { Ajv, addFormats } = lazy.ajv();
      const ajv = new Ajv();
      addFormats(ajv);
      const valid = ajv.compile({ type: 'string', format: 'email' });
      const parser = require(${JSON.stringify(BUNDLE)}).pathTemplateParser;
      const spec = { openapi: '3.0.3', paths: { '/pets/{petId}': { get: { operationId: 'op', parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }] } } } };
      const req = build({ spec, operationId: 'op', parameters: { 'path.petId': 'a b/c' }, baseURL: 'http://127.0.0.1:1' });
      process.stdout.write(JSON.stringify({
        url: req.url,
        memoised: parser.default('/pets/{petId}') === parser.default('/pets/{petId}'),
        undici: typeof lazy.undici().Agent,
        formats: [valid('a@b.example'), valid('nope')],
        packageFiles: Object.keys(require.cache).filter((file) => file.includes('node_modules')).length,
      }));`;
    const seen = JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 30_000 }));
    expect(seen).toEqual({ url: 'http://127.0.0.1:1/pets/a%20b%2Fc', memoised: true, undici: 'function', formats: [true, false], packageFiles: 0 });
  });
});
