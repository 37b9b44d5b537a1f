/**
 * The package as a TypeScript project that installed it sees it: `mcpvisor` and its subpaths
 * (`mcpvisor/web`, `mcpvisor/shell`, `mcpvisor/openapi`, the README's library entry points) must
 * resolve with their types under every module resolution tsc offers, against the built dist/.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT } from '../helpers/processes';
import { tempDir } from '../helpers/temp';

const CONSUMER = `import { runWorker, textResult, threadWorker, validateConfig } from 'mcpvisor';
import type { CallContext, ToolCall, WorkerInit, WorkerLogger } from 'mcpvisor';
import { WebContentFetcher, RateLimiter } from 'mcpvisor/web';
import { runCommand } from 'mcpvisor/shell';
import { OpenAPIServer } from 'mcpvisor/openapi';
export const used = [runWorker, validateConfig, WebContentFetcher, RateLimiter, runCommand, OpenAPIServer];
export const limiter: RateLimiter = new RateLimiter(0.5, 1000);
// A custom toolset in TypeScript names the types of its init, logger and handler (README).
const handle = async (call: ToolCall, context: CallContext) => textResult(call.tool + context.deadlineMs);
export const init: WorkerInit = async (_config, log: WorkerLogger) => (log.info('ready'), { tools: [], handle });
// "A kind: thread module exports threadWorker(init) instead, with the same init" (README).
export default threadWorker(init);
`;

describe('the package for TypeScript consumers', () => {
  test.each([
    ['node10 (moduleResolution "node")', { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 }],
    ['node16', { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 }],
    ['bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }],
  ])('its entry points and their types resolve under %s', (_name, resolution) => {
    const project = tempDir('consumer-');
    mkdirSync(path.join(project, 'node_modules'));
    symlinkSync(ROOT, path.join(project, 'node_modules', 'mcpvisor'));
    const file = path.join(project, 'index.ts');
    writeFileSync(file, CONSUMER);
    const program = ts.createProgram([file], {
      ...resolution,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      // Our declarations in dist/ are checked too (skipLibCheck would skip them); the problems of
      // the MCP SDK's, zod's or pino's under some settings are theirs and filtered out below.
      skipLibCheck: false,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    });
    const ours = (d: ts.Diagnostic) => !d.file || !realpathSync(d.file.fileName).includes(`${path.sep}node_modules${path.sep}`);
    const problems = ts.getPreEmitDiagnostics(program).filter(ours).map((d) => `${d.file ? path.relative(project, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  });
});
